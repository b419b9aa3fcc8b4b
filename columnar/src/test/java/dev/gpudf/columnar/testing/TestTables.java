package dev.gpudf.columnar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compare.VectorEqualsVisitor;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.util.TransferPair;

/** Generated Arrow tables covering every gpudf type, and comparisons between them. */
public final class TestTables {
  /** Strings with multi-byte UTF-8, the empty string and a long one. */
  private static final String[] WORDS = {
    "", "a", "héllo", "日本語のテキスト", "emoji 🚀🎉", "Ωmega", "x".repeat(70), "naïve café", "Zürich", "😀"
  };

  private TestTables() {}

  /** Null pattern: none, every {@code k}-th row, or all rows. */
  public record Nulls(int every) {
    public static final Nulls NONE = new Nulls(0);
    public static final Nulls ALL = new Nulls(1);

    public static Nulls every(int k) {
      return new Nulls(k);
    }

    /** Whether row {@code row} is NULL under this pattern. */
    public boolean isNull(int row) {
      return every > 0 && row % every == 0;
    }

    @Override
    public String toString() {
      return every == 0 ? "no nulls" : every == 1 ? "all null" : "null every " + every;
    }
  }

  /**
   * A root with one column per gpudf type (13 columns), {@code rows} rows of seeded random data
   * including NaN, infinities, -0.0, extreme integers and non-ASCII strings. The caller closes it.
   */
  public static VectorSchemaRoot allTypes(BufferAllocator allocator, int rows, Nulls nulls, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<FieldVector> vs = new ArrayList<>();
    BitVector b = new BitVector("bool", allocator);
    TinyIntVector i8 = new TinyIntVector("i8", allocator);
    SmallIntVector i16 = new SmallIntVector("i16", allocator);
    IntVector i32 = new IntVector("i32", allocator);
    BigIntVector i64 = new BigIntVector("i64", allocator);
    Float4Vector f32 = new Float4Vector("f32", allocator);
    Float8Vector f64 = new Float8Vector("f64", allocator);
    DecimalVector d64 = new DecimalVector("dec18", allocator, 18, 4);
    DecimalVector d128 = new DecimalVector("dec38", allocator, 38, 10);
    DateDayVector date = new DateDayVector("date", allocator);
    TimeStampMicroTZVector tsz = new TimeStampMicroTZVector("ts_utc", allocator, "UTC");
    TimeStampNanoVector tsn = new TimeStampNanoVector("ts_nano", allocator);
    VarCharVector s = new VarCharVector("str", allocator);
    vs.addAll(List.of(b, i8, i16, i32, i64, f32, f64, d64, d128, date, tsz, tsn, s));
    for (FieldVector v : vs) {
      v.setInitialCapacity(rows);
      v.allocateNew();
    }
    double[] specialF = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0, Double.MIN_VALUE};
    long[] specialL = {Long.MIN_VALUE, Long.MAX_VALUE, 0, -1};
    for (int i = 0; i < rows; i++) {
      if (nulls.isNull(i)) {
        for (FieldVector v : vs) {
          v.setNull(i);
        }
        continue;
      }
      b.setSafe(i, r.nextBoolean() ? 1 : 0);
      i8.setSafe(i, (byte) r.nextInt());
      i16.setSafe(i, (short) r.nextInt());
      i32.setSafe(i, r.nextInt());
      i64.setSafe(i, i % 97 == 5 ? specialL[i % specialL.length] : r.nextLong());
      double d = i % 89 == 3 ? specialF[i % specialF.length] : r.nextDouble() * 2e6 - 1e6;
      f32.setSafe(i, (float) d);
      f64.setSafe(i, d);
      d64.setSafe(i, new BigDecimal(BigInteger.valueOf(r.nextLong() % 999_999_999_999_999_999L), 4));
      d128.setSafe(i, new BigDecimal(new BigInteger(120, new java.util.Random(r.nextLong())).subtract(BigInteger.ONE.shiftLeft(119)), 10));
      date.setSafe(i, r.nextInt(-719_162, 2_932_896));
      tsz.setSafe(i, r.nextLong(-62_135_596_800_000_000L, 253_402_300_799_000_000L));
      tsn.setSafe(i, r.nextLong());
      s.setSafe(i, WORDS[r.nextInt(WORDS.length)].getBytes(StandardCharsets.UTF_8));
    }
    for (FieldVector v : vs) {
      v.setValueCount(rows);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vs);
    root.setRowCount(rows);
    return root;
  }

  /** One row of an INT32 column {@code id} and a LIST column {@code tags}, a type gpudf rejects. */
  public static VectorSchemaRoot withListColumn(BufferAllocator allocator) {
    IntVector ok = new IntVector("id", allocator);
    ListVector list = ListVector.empty("tags", allocator);
    ok.allocateNew(1);
    ok.setValueCount(1);
    list.allocateNew();
    list.setValueCount(1);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(ok, list));
    root.setRowCount(1);
    return root;
  }

  /** Rows {@code [start, start + length)} of {@code root} as Arrow slices (no copy where Arrow allows). */
  public static VectorSchemaRoot slice(VectorSchemaRoot root, int start, int length) {
    List<FieldVector> vs = new ArrayList<>();
    for (FieldVector v : root.getFieldVectors()) {
      TransferPair tp = v.getTransferPair(v.getAllocator());
      tp.splitAndTransfer(start, length);
      vs.add((FieldVector) tp.getTo());
    }
    VectorSchemaRoot sliced = new VectorSchemaRoot(vs);
    sliced.setRowCount(length);
    return sliced;
  }

  /** Asserts equal schemas, row counts, null positions and values (NaN equal to NaN). */
  public static void assertSameData(VectorSchemaRoot expected, VectorSchemaRoot actual) {
    assertEquals(expected.getSchema(), actual.getSchema(), "schema");
    assertEquals(expected.getRowCount(), actual.getRowCount(), "row count");
    for (int c = 0; c < expected.getFieldVectors().size(); c++) {
      FieldVector e = expected.getVector(c);
      FieldVector a = actual.getVector(c);
      assertEquals(e.getValueCount(), a.getValueCount(), e.getName() + " value count");
      assertEquals(e.getNullCount(), a.getNullCount(), e.getName() + " null count");
      assertTrue(VectorEqualsVisitor.vectorEquals(e, a), () -> e.getName() + " differs: " + firstDifference(e, a));
    }
  }

  private static String firstDifference(FieldVector e, FieldVector a) {
    for (int i = 0; i < e.getValueCount(); i++) {
      Object x = e.getObject(i);
      Object y = a.getObject(i);
      if (x == null ? y != null : !x.equals(y)) {
        return "row " + i + ": expected " + x + ", got " + y;
      }
    }
    return "no row differs by getObject";
  }
}
