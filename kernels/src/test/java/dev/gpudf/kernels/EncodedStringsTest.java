package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.StringCodes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A string column held as dictionary codes ({@link HostColumn#encoded}) answers as the same
 * column held as strings: grouped by ({@link PackedKeys} packs its codes), filtered
 * ({@link ConjunctFilter} evaluates a conjunct once per entry) and gathered (the codes are
 * gathered), with NULLs, empty and non-ASCII strings, and a dictionary that holds one string twice
 * (two entries; the rows' codes name the first, as the decoder writes them:
 * {@code ParquetTablesTest} checks that it does).
 */
class EncodedStringsTest {
  // "b" twice: entries 1 and 4
  private static final String[] ENTRIES = {"AIR", "b", "", "naïve café", "b", "REG AIR", "日本", "12", "x7"};

  /** A dictionary of {@link #ENTRIES} and {@code rows} random canonical codes into it from {@code a}, every seventh row NULL; the caller closes it. */
  private static StringCodes codes(RootAllocator a, int rows) {
    List<byte[]> entries = new ArrayList<>();
    int[] offsets = new int[ENTRIES.length + 1];
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    for (int e = 0; e < ENTRIES.length; e++) {
      byte[] b = ENTRIES[e].getBytes(StandardCharsets.UTF_8);
      entries.add(b);
      bytes.writeBytes(b);
      offsets[e + 1] = bytes.size();
    }
    SplittableRandom random = new SplittableRandom(rows);
    int[] first = StringCodes.firstEqual(bytes.toByteArray(), offsets);
    ArrowBuf codes = a.buffer(4L * rows);
    int nulls = 0;
    for (int r = 0; r < rows; r++) {
      codes.setInt(4L * r, r % 7 == 3 ? -1 : first[random.nextInt(ENTRIES.length)]);
      nulls += r % 7 == 3 ? 1 : 0;
    }
    return StringCodes.of(bytes.toByteArray(), offsets, codes, rows, nulls);
  }

  /** The table (s: strings, as codes, which it then owns, or as a vector; i: an int) the caller closes. */
  private static HostTable table(RootAllocator a, StringCodes codes, boolean encoded) {
    org.apache.arrow.vector.types.pojo.Field field = ArrowTypes.toArrowField("s", DataType.STRING);
    HostColumn s = encoded ? HostColumn.encoded(codes, field, a) : new HostColumn(codes.vector(a, field));
    IntVector i = new IntVector("i", a);
    for (int r = 0; r < codes.rows(); r++) {
      i.setSafe(r, r % 3);
    }
    i.setValueCount(codes.rows());
    return new HostTable(List.of("s", "i"), List.of(s, new HostColumn(i)), codes.rows());
  }

  private static String tsv(RootAllocator a, HostTable t) {
    try (VectorSchemaRoot r = t.toArrow(a)) {
      return r.contentToTSVString();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1025, 20_000})
  void answersAsTheSameStrings(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      StringCodes codes = codes(a, rows);
      try (HostTable plain = table(a, codes, false); HostTable encoded = table(a, codes, true)) {
        assertEquals(tsv(a, plain), tsv(a, encoded), "the strings made from the codes");
        for (int[] keys : new int[][] {{0}, {0, 1}, {1, 0}}) {
          List<GroupBy.Agg> aggs = List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0), new GroupBy.Agg(Reduction.SUM, 1),
              new GroupBy.Agg(Reduction.MIN, 0), new GroupBy.Agg(Reduction.ANY_VALUE, 0));
          List<String> names = java.util.stream.IntStream.range(0, keys.length + aggs.size()).mapToObj(k -> "c" + k).toList();
          try (HostTable want = GroupBy.aggregate(exec, plain, keys, aggs, names);
              HostTable got = GroupBy.aggregate(exec, encoded, keys, aggs, names)) {
            assertEquals(tsv(a, want), tsv(a, got), "grouped by " + java.util.Arrays.toString(keys) + ", " + rows + " rows");
            if (keys.length == 1 && keys[0] == 0 && rows >= 1000) {
              // eight distinct strings and NULL: "b"'s two entries are one group
              assertEquals(9, got.rowCount());
            }
          }
        }
        Expr s = Expr.col(0);
        Expr i = Expr.col(1);
        List<Expr> conditions = List.of(
            Expr.call(Op.EQ, s, new Expr.Lit(DataType.STRING, "b")),
            Expr.call(Op.NE, s, new Expr.Lit(DataType.STRING, "b")),
            Expr.call(Op.IN, s, new Expr.Lit(DataType.STRING, "AIR"), new Expr.Lit(DataType.STRING, "REG AIR")),
            Expr.call(Op.LIKE, s, new Expr.Lit(DataType.STRING, "%a%")),
            Expr.call(Op.LT, s, new Expr.Lit(DataType.STRING, "c")),
            Expr.call(Op.IS_NULL, s),
            Expr.call(Op.IS_NOT_NULL, s),
            Expr.call(Op.AND, Expr.call(Op.GT, i, Expr.lit(0)), Expr.call(Op.EQ, s, new Expr.Lit(DataType.STRING, ""))),
            // fails on most entries ("AIR" is no number), on rows the first conjunct keeps: an error
            Expr.call(Op.AND, Expr.call(Op.IS_NOT_NULL, s), Expr.call(Op.GT, new Expr.Cast(s, DataType.INT32), Expr.lit(5))),
            // fails on no row in play: "12" only where the string is a number
            Expr.call(Op.AND, Expr.call(Op.EQ, s, new Expr.Lit(DataType.STRING, "12")),
                Expr.call(Op.GT, new Expr.Cast(s, DataType.INT32), Expr.lit(5))));
        for (Expr c : conditions) {
          String where = c + ", " + rows + " rows";
          int[] want;
          try {
            want = Filter.keptRows(exec, plain, c);
          } catch (RuntimeException e) {
            RuntimeException got = assertThrows(RuntimeException.class, () -> Filter.keptRows(exec, encoded, c), where);
            assertEquals(e.getClass(), got.getClass(), where);
            continue;
          }
          int[] got = Filter.keptRows(exec, encoded, c);
          assertArrayEquals(want, got, where);
          try (HostTable w = Filter.filter(exec, plain, want); HostTable g = Filter.filter(exec, encoded, got)) {
            assertNotNull(g.column(0).codes(), "a gathered column of codes stays one");
            assertEquals(tsv(a, w), tsv(a, g), where);
          }
        }
      }
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33})
  void aColumnOfCodesMakesItsVectorOnlyWhenRead(int rows) {
    try (RootAllocator a = new RootAllocator()) {
      StringCodes codes = codes(a, rows);
      long held = a.getAllocatedMemory();
      assertTrue(held >= 4L * rows, "the allocator counts the codes: " + held + " bytes for " + rows + " rows");
      HostColumn c = HostColumn.encoded(codes, ArrowTypes.toArrowField("s", DataType.STRING), a);
      assertEquals(held, a.getAllocatedMemory(), "nothing more allocated before the vector is read");
      assertEquals(rows / 7 + (rows % 7 > 3 ? 1 : 0), c.nullCount());
      try (HostColumn decoded = c.decoded()) {
        assertNull(decoded.codes());
        assertEquals(c.vector().getValueCount(), decoded.vector().getValueCount());
      }
      c.close();
      assertEquals(0, a.getAllocatedMemory(), "the column frees its codes and its vector");
      ArrowBuf small = a.buffer(4);
      assertThrows(dev.gpudf.columnar.error.InternalException.class,
          () -> StringCodes.of(new byte[1], new int[] {0, 1}, small, 2, 0), "two codes in a buffer of one");
      assertEquals(0, a.getAllocatedMemory(), "a refused buffer is freed");
    }
  }
}
