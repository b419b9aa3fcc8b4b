package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.HostTable;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * Batches into gpudf: one of Arrow columns (another gpudf operator's) moves into the taking task's
 * allocator with no copy, one of Spark's own columns is copied; either way the values, NULLs and
 * non-ASCII strings arrive, and nothing stays counted where it came from.
 */
class SparkArrowTest {
  private static final StructType SCHEMA = new StructType().add("k", DataTypes.IntegerType).add("s", DataTypes.StringType);

  @Test
  void arrowColumnsMoveAndSparkColumnsAreCopied() {
    try (RootAllocator root = new RootAllocator(); BufferAllocator upstream = root.newChildAllocator("up", 0, Long.MAX_VALUE);
        BufferAllocator mine = root.newChildAllocator("mine", 0, Long.MAX_VALUE)) {
      IntVector k = new IntVector("k", upstream);
      VarCharVector s = new VarCharVector("s", upstream);
      k.allocateNew(3);
      s.allocateNew();
      k.set(0, 7);
      k.setNull(1);
      k.set(2, -1);
      s.setSafe(0, "Zürich".getBytes(StandardCharsets.UTF_8));
      s.setSafe(1, "".getBytes(StandardCharsets.UTF_8));
      s.setNull(2);
      k.setValueCount(3);
      s.setValueCount(3);
      ColumnarBatch arrow = new ColumnarBatch(new ColumnVector[] {new ArrowColumnVector(k), new ArrowColumnVector(s)}, 3);
      try (HostTable t = SparkArrow.toGpudf(arrow, SCHEMA, mine)) {
        check(t);
        assertTrue(mine.getAllocatedMemory() > 0);
        arrow.close();
        assertEquals(0, upstream.getAllocatedMemory(), "the buffers moved to the taking allocator");
        // the table back out to Spark, and in again through Spark's own row copy
        try (SparkArrow.Output out = SparkArrow.toSpark(t, mine)) {
          ColumnarBatch copied = new ColumnarBatch(new ColumnVector[] {copy(out.batch().column(0), 3, true),
              copy(out.batch().column(1), 3, false)}, 3);
          try (HostTable again = SparkArrow.toGpudf(copied, SCHEMA, mine)) {
            check(again);
          }
        }
      }
      assertEquals(0, mine.getAllocatedMemory());
    }
  }

  /**
   * Spark's own columns copied column by column give what Spark's row writer gives: every type
   * copied, NULLs (none at all in the batch of 32, which the copy takes another way), extreme
   * values, non-ASCII and empty strings, decimals of Spark's three storages (int, long, bytes);
   * batch sizes 0, 1, 31, 32, 33 and thousands.
   */
  @Test
  void theColumnCopyEqualsSparksRowWriter() {
    StructType schema = new StructType().add("i", DataTypes.IntegerType).add("l", DataTypes.LongType)
        .add("d", DataTypes.DoubleType).add("b", DataTypes.BooleanType).add("day", DataTypes.DateType)
        .add("s", DataTypes.StringType).add("small", DataTypes.createDecimalType(12, 2))
        .add("wide", DataTypes.createDecimalType(30, 4)).add("tiny", DataTypes.createDecimalType(7, 2));
    String[] words = {"", "a", "Zürich", "日本語", "😀"};
    for (int rows : new int[] {0, 1, 31, 32, 33, 5_000}) {
      org.apache.spark.sql.execution.vectorized.OnHeapColumnVector[] cols =
          org.apache.spark.sql.execution.vectorized.OnHeapColumnVector.allocateColumns(rows, schema);
      java.util.SplittableRandom r = new java.util.SplittableRandom(rows);
      for (int i = 0; i < rows; i++) {
        for (int c = 0; c < cols.length; c++) {
          if (r.nextInt(6) == 0 && rows != 32) {
            cols[c].putNull(i);
            continue;
          }
          switch (c) {
            case 0 -> cols[c].putInt(i, i % 7 == 0 ? Integer.MIN_VALUE : r.nextInt());
            case 1 -> cols[c].putLong(i, i % 5 == 0 ? Long.MAX_VALUE : r.nextLong());
            case 2 -> cols[c].putDouble(i, i % 9 == 0 ? Double.NaN : i % 9 == 1 ? -0.0 : r.nextDouble() * 1e6);
            case 3 -> cols[c].putBoolean(i, r.nextBoolean());
            case 4 -> cols[c].putInt(i, r.nextInt(-100_000, 100_000));
            case 5 -> cols[c].putByteArray(i, words[r.nextInt(words.length)].getBytes(StandardCharsets.UTF_8));
            case 6 -> cols[c].putDecimal(i, org.apache.spark.sql.types.Decimal.apply(
                java.math.BigDecimal.valueOf(r.nextLong(-99_999_999_999L, 99_999_999_999L), 2)), 12);
            case 7 -> cols[c].putDecimal(i, org.apache.spark.sql.types.Decimal.apply(new java.math.BigDecimal(
                new java.math.BigInteger(90, new java.util.Random(i)), 4)), 30);
            default -> cols[c].putDecimal(i, org.apache.spark.sql.types.Decimal.apply(
                java.math.BigDecimal.valueOf(i % 3 == 0 ? -9_999_999 : r.nextInt(-9_999_999, 9_999_999), 2)), 7);
          }
        }
      }
      ColumnarBatch batch = new ColumnarBatch(cols, rows);
      try (RootAllocator a = new RootAllocator(); HostTable copied = SparkArrow.toGpudf(batch, schema, a);
          HostTable written = SparkArrow.rowByRow(batch, schema, a)) {
        try (VectorSchemaRoot x = copied.toArrow(a); VectorSchemaRoot y = written.toArrow(a)) {
          assertEquals(y.contentToTSVString(), x.contentToTSVString(), rows + " rows");
          assertEquals(rows, x.getRowCount());
        }
      } finally {
        batch.close();
      }
    }
  }

  private static void check(HostTable t) {
    assertEquals(3, t.rowCount());
    try (VectorSchemaRoot r = t.toArrow(t.column(0).vector().getAllocator())) {
      assertEquals(7, r.getVector(0).getObject(0));
      assertEquals(null, r.getVector(0).getObject(1));
      assertEquals(-1, r.getVector(0).getObject(2));
      assertEquals("Zürich", r.getVector(1).getObject(0).toString());
      assertEquals("", r.getVector(1).getObject(1).toString());
      assertEquals(null, r.getVector(1).getObject(2));
    }
  }

  /** A Spark on-heap column holding {@code source}'s {@code rows} values (not Arrow: the copying path). */
  private static ColumnVector copy(ColumnVector source, int rows, boolean ints) {
    org.apache.spark.sql.execution.vectorized.OnHeapColumnVector v = new org.apache.spark.sql.execution.vectorized
        .OnHeapColumnVector(rows, ints ? DataTypes.IntegerType : DataTypes.StringType);
    for (int i = 0; i < rows; i++) {
      if (source.isNullAt(i)) {
        v.putNull(i);
      } else if (ints) {
        v.putInt(i, source.getInt(i));
      } else {
        byte[] b = source.getUTF8String(i).getBytes();
        v.putByteArray(i, b);
      }
    }
    return v;
  }
}
