package dev.gpudf.kernels;

import static dev.gpudf.kernels.Expr.call;
import static dev.gpudf.kernels.Expr.col;
import static dev.gpudf.kernels.Expr.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A dictionary-encoded column gives, on both backends, exactly what evaluating its decoded
 * strings gives: parts over the one column (evaluated per entry, then looked up by code), parts
 * mixing it with other columns (decoded first), NULL codes, failures of unused entries.
 */
class DictionaryEvalTest {
  private static final String[] WORDS = {"", "green apple", "Grüße aus Köln", "日本語のテキスト", "special requests",
    "forest green", "x", "ZEBRA", "ünïcödé green", "12", "7"};
  private RootAllocator allocator;
  private Exec exec;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
    exec = Exec.onCpu(allocator);
  }

  @AfterEach
  void close() {
    exec.close();
    allocator.close();
  }

  private static Expr str(String s) {
    return new Expr.Lit(DataType.STRING, s);
  }

  /** Over s (column 0, encoded) and n (column 1, INT32). */
  static List<Expr> suite() {
    Expr s = col(0);
    Expr n = col(1);
    return List.of(
        call(Op.LIKE, s, str("%green%")),
        call(Op.NOT, call(Op.LIKE, s, str("%special%requests%"))),
        call(Op.EQ, s, str("x")),
        call(Op.LT, s, str("m")),
        call(Op.CHAR_LENGTH, s),
        call(Op.EQ, call(Op.UPPER, s), str("ZEBRA")),
        call(Op.IS_NULL, s),
        call(Op.COALESCE, s, str("none")),
        s,
        call(Op.IN, s, str("x"), str("ZEBRA"), str("")),
        call(Op.SUBSTRING, s, lit(2), lit(3)),
        call(Op.POSITION, str("green"), s),
        call(Op.GT, call(Op.CHAR_LENGTH, s), n),
        call(Op.AND, call(Op.LIKE, s, str("%green%")), call(Op.GT, n, lit(3))),
        call(Op.CONCAT, s, Expr.cast(n, DataType.STRING)),
        call(Op.EQ, s, call(Op.SUBSTRING, s, lit(1), n)));
  }

  /** Codes into {@code words} (every seventh row NULL when {@code nulls}) and n in [0, 10). */
  private VectorSchemaRoot encoded(int rows, int words, boolean nulls, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    IntVector codes = new IntVector("s", allocator);
    IntVector n = new IntVector("n", allocator);
    codes.allocateNew(rows);
    n.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      if (nulls && i % 7 == 3) {
        codes.setNull(i);
      } else {
        codes.set(i, r.nextInt(words));
      }
      n.set(i, r.nextInt(10));
    }
    codes.setValueCount(rows);
    n.setValueCount(rows);
    return root(List.of(codes, n), rows);
  }

  private VectorSchemaRoot dictionary(String... words) {
    VarCharVector v = new VarCharVector("s", allocator);
    v.allocateNew();
    for (int i = 0; i < words.length; i++) {
      v.setSafe(i, words[i].getBytes(StandardCharsets.UTF_8));
    }
    v.setValueCount(words.length);
    return root(List.of(v), words.length);
  }

  /** The table {@code encoded} stands for: column 0 holds the words themselves. */
  private VectorSchemaRoot decoded(VectorSchemaRoot encoded, String[] words) {
    IntVector codes = (IntVector) encoded.getVector(0);
    int rows = encoded.getRowCount();
    VarCharVector s = new VarCharVector("s", allocator);
    s.allocateNew();
    for (int i = 0; i < rows; i++) {
      if (codes.isNull(i)) {
        s.setNull(i);
      } else {
        s.setSafe(i, words[codes.get(i)].getBytes(StandardCharsets.UTF_8));
      }
    }
    s.setValueCount(rows);
    IntVector n = new IntVector("n", allocator);
    ((IntVector) encoded.getVector(1)).makeTransferPair(n).splitAndTransfer(0, rows);
    return root(List.of(s, n), rows);
  }

  private static VectorSchemaRoot root(List<FieldVector> vectors, int rows) {
    VectorSchemaRoot root = new VectorSchemaRoot(new ArrayList<>(vectors));
    root.setRowCount(rows);
    return root;
  }

  private static List<Object> values(Column c, VectorSchemaRoot back) {
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < c.rowCount(); i++) {
      Object o = back.getVector(0).getObject(i);
      out.add(o == null ? null : o.toString());
    }
    return out;
  }

  private static List<Object> values(HostColumn c) {
    try (VectorSchemaRoot back = new VectorSchemaRoot(List.of(c.vector()))) {
      back.setRowCount(c.rowCount());
      return values(c, back);
    }
  }

  private List<Object> cpu(VectorSchemaRoot table, Expr e) {
    try (HostTable t = HostTable.fromArrow(table); HostColumn c = Evaluate.evaluate(exec, t, e)) {
      return values(c);
    }
  }

  private List<Object> cpuEncoded(VectorSchemaRoot table, VectorSchemaRoot dictionary, Expr e) {
    try (HostTable t = HostTable.fromArrow(table); HostTable d = HostTable.fromArrow(dictionary);
        HostColumn c = Evaluate.evaluate(exec, t, Map.of(0, d.column(0)), e)) {
      assertEquals(t.rowCount(), c.rowCount(), e.toString());
      return values(c);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000})
  void cpuMatchesTheDecodedColumn(int rows) {
    for (boolean nulls : new boolean[] {false, true}) {
      try (VectorSchemaRoot enc = encoded(rows, WORDS.length, nulls, rows); VectorSchemaRoot dict = dictionary(WORDS);
          VectorSchemaRoot dec = decoded(enc, WORDS)) {
        for (Expr e : suite()) {
          assertEquals(cpu(dec, e), cpuEncoded(enc, dict, e), e + " nulls " + nulls);
        }
      }
    }
  }

  @Test
  void anEntryNoRowUsesMayFailAndARowThatFailsIsNamed() {
    String[] words = {"12", "7", "not a number"};
    Expr cast = call(Op.ADD, Expr.cast(col(0), DataType.INT32), col(1));
    // rows use entries 0 and 1 only: per entry, "not a number" fails, so the part runs per row
    try (VectorSchemaRoot enc = encoded(100, 2, true, 5); VectorSchemaRoot dict = dictionary(words);
        VectorSchemaRoot dec = decoded(enc, words)) {
      assertEquals(cpu(dec, cast), cpuEncoded(enc, dict, cast));
      ((IntVector) enc.getVector(0)).set(40, 2);
      try (VectorSchemaRoot bad = decoded(enc, words)) {
        String want = assertThrows(UserException.class, () -> cpu(bad, cast)).getMessage();
        assertEquals(want, assertThrows(UserException.class, () -> cpuEncoded(enc, dict, cast)).getMessage());
      }
    }
  }

  @Test
  void badCodesAndDictionariesAreClearErrors() {
    try (VectorSchemaRoot enc = encoded(10, 3, false, 1); VectorSchemaRoot dict = dictionary("a", "b")) {
      // the codes use entry 2 of a two-word dictionary
      ((IntVector) enc.getVector(0)).set(4, 2);
      UserException outside = assertThrows(UserException.class, () -> cpuEncoded(enc, dict, call(Op.EQ, col(0), str("a"))));
      assertEquals("gather map holds an index outside [0, 2)", outside.getMessage());
      try (HostTable t = HostTable.fromArrow(enc); HostTable d = HostTable.fromArrow(dict)) {
        // the dictionary's own strings offered as codes
        UserException notCodes = assertThrows(UserException.class,
            () -> Evaluate.evaluate(exec, d, Map.of(0, d.column(0)), call(Op.EQ, col(0), str("a"))).close());
        assertEquals("dictionary codes must be INT32, column 0 is " + DataType.STRING, notCodes.getMessage());
        UserException noColumn = assertThrows(UserException.class,
            () -> Evaluate.evaluate(exec, t, Map.of(5, d.column(0)), col(1)).close());
        assertEquals("a dictionary for column 5 of a 2-column table", noColumn.getMessage());
      }
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33, 1000, 70_001})
  void gpuMatchesTheCpuTwin(int rows) {
    try (Gpu gpu = Gpu.open(0, 2L << 30, 256L << 20); Exec g = Exec.onGpu(gpu, allocator)) {
      for (boolean nulls : new boolean[] {false, true}) {
        try (VectorSchemaRoot enc = encoded(rows, WORDS.length, nulls, rows); VectorSchemaRoot dict = dictionary(WORDS);
            DeviceTable t = DeviceTable.fromArrow(gpu, enc, g.stream());
            DeviceTable d = DeviceTable.fromArrow(gpu, dict, g.stream())) {
          for (Expr e : suite()) {
            try (DeviceColumn got = Evaluate.evaluate(g, t, Map.of(0, d.column(0)), e)) {
              got.retain();
              try (DeviceTable one = new DeviceTable(gpu, List.of("r"), List.of(got), rows);
                  VectorSchemaRoot back = one.toArrow(allocator, g.stream())) {
                assertEquals(cpuEncoded(enc, dict, e), values(got, back), e + " nulls " + nulls);
              }
            }
          }
        }
      }
    }
  }

  /** {@link #gpuMatchesTheCpuTwin} on millions of rows (grid-stride loops, many blocks), in the {@code gpu-heavy} suite. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {1_000_003})
  void gpuMatchesTheCpuTwinOnManyRows(int rows) {
    gpuMatchesTheCpuTwin(rows);
  }
}
