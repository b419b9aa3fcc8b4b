package dev.gpudf.kernels;

import static dev.gpudf.kernels.Expr.call;
import static dev.gpudf.kernels.Expr.col;
import static dev.gpudf.kernels.Expr.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Expression semantics on the CPU twin with hand-worked expectations, and GPU == CPU on random data. */
class EvaluateTest {
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

  /** x INT32, y INT32, b BOOL, f FLOAT64, price DECIMAL(15,2), disc DECIMAL(15,2); nulls as given by null entries. */
  private VectorSchemaRoot table(Integer[] x, Integer[] y, Boolean[] b, Double[] f, String[] price, String[] disc) {
    IntVector vx = new IntVector("x", allocator);
    IntVector vy = new IntVector("y", allocator);
    BitVector vb = new BitVector("b", allocator);
    Float8Vector vf = new Float8Vector("f", allocator);
    DecimalVector vp = new DecimalVector("price", allocator, 15, 2);
    DecimalVector vd = new DecimalVector("disc", allocator, 15, 2);
    List<FieldVector> all = List.of(vx, vy, vb, vf, vp, vd);
    int n = x.length;
    all.forEach(v -> {
      v.setInitialCapacity(n);
      v.allocateNew();
    });
    for (int i = 0; i < n; i++) {
      if (x[i] == null) vx.setNull(i); else vx.set(i, x[i]);
      if (y[i] == null) vy.setNull(i); else vy.set(i, y[i]);
      if (b[i] == null) vb.setNull(i); else vb.set(i, b[i] ? 1 : 0);
      if (f[i] == null) vf.setNull(i); else vf.set(i, f[i]);
      if (price[i] == null) vp.setNull(i); else vp.setSafe(i, new BigDecimal(price[i]));
      if (disc[i] == null) vd.setNull(i); else vd.setSafe(i, new BigDecimal(disc[i]));
    }
    all.forEach(v -> v.setValueCount(n));
    VectorSchemaRoot root = new VectorSchemaRoot(all);
    root.setRowCount(n);
    return root;
  }

  private VectorSchemaRoot sample() {
    return table(
        new Integer[] {1, 7, null, -4, Integer.MAX_VALUE, 0},
        new Integer[] {2, 0, 5, 3, 1, null},
        new Boolean[] {true, false, null, true, null, false},
        new Double[] {1.5, Double.NaN, -0.0, null, Double.POSITIVE_INFINITY, 2.0},
        new String[] {"10.00", "99.99", "0.01", null, "12345.67", "1.10"},
        new String[] {"0.05", "0.10", "0.00", "0.01", null, "1.00"});
  }

  private List<Object> eval(VectorSchemaRoot root, Expr e) {
    try (HostTable t = HostTable.fromArrow(root); HostColumn c = Evaluate.evaluate(exec, t, e)) {
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < c.rowCount(); i++) {
        out.add(c.vector().getObject(i));
      }
      return out;
    }
  }

  private void expectError(VectorSchemaRoot root, Expr e, String message) {
    try (HostTable t = HostTable.fromArrow(root)) {
      UserException ex = assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, e));
      assertEquals(message, ex.getMessage());
    }
  }

  @Test
  void integerArithmeticChecksOverflowAndDivisionByZero() {
    try (VectorSchemaRoot r = sample()) {
      assertEquals(Arrays.asList(3L, 7L, null, -1L, (long) Integer.MAX_VALUE + 1, null), eval(r, call(Op.ADD, col(0), call(Op.ADD, col(1), lit(0L)))));
      // row 4: MAX_VALUE + 1 overflows INT32; row 1: 7 / 0
      expectError(r, call(Op.ADD, col(0), col(1)), "numeric overflow in row 4");
      expectError(r, call(Op.DIV, col(0), col(1)), "division by zero in row 1");
      // the same division guarded by CASE never fails
      Expr guarded = Expr.caseWhen(List.of(call(Op.NE, col(1), lit(0)), call(Op.DIV, col(0), col(1))), lit(-1));
      assertEquals(Arrays.asList(0, -1, null, -1, Integer.MAX_VALUE, -1), eval(r, guarded));
      assertEquals(Arrays.asList(-1, -7, null, 4, -Integer.MAX_VALUE, 0), eval(r, call(Op.NEG, col(0))));
      assertEquals(Arrays.asList(1, 0, null, -1, 0, null), eval(r, call(Op.MOD, col(0), Expr.caseWhen(
          List.of(call(Op.EQ, col(1), lit(0)), lit(7)), col(1)))));
    }
  }

  @Test
  void wideningFollowsTheOperands() {
    try (VectorSchemaRoot r = sample(); HostTable t = HostTable.fromArrow(r)) {
      assertEquals(DataType.INT32, Evaluate.typeOf(call(Op.ADD, col(0), col(1)), t.types()));
      assertEquals(DataType.INT64, Evaluate.typeOf(call(Op.ADD, col(0), lit(1L)), t.types()));
      assertEquals(DataType.FLOAT64, Evaluate.typeOf(call(Op.MUL, col(0), col(3)), t.types()));
      // Calcite: DECIMAL(15,2) - INTEGER -> DECIMAL(max(13, 10) + 2 + 1, 2)
      assertEquals(DataType.decimal(16, 2), Evaluate.typeOf(call(Op.SUB, lit(1), col(5)), t.types()));
      assertEquals(DataType.decimal(31, 4), Evaluate.typeOf(call(Op.MUL, col(4), call(Op.SUB, lit(1), col(5))), t.types()));
      // INT64 + INT64 beyond 64 bits is an overflow, never a wrap
      assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.ADD, lit(Long.MAX_VALUE), lit(1L))));
    }
  }

  @Test
  void tpchStyleDecimalExpressionIsExact() {
    try (VectorSchemaRoot r = sample()) {
      // price * (1 - disc) * (1 + disc): DECIMAL(15,2) -> DECIMAL(38, 6) (precision capped)
      Expr e = call(Op.MUL, call(Op.MUL, col(4), call(Op.SUB, lit(1), col(5))), call(Op.ADD, lit(1), col(5)));
      List<Object> got = eval(r, e);
      String[] price = {"10.00", "99.99", "0.01", null, "12345.67", "1.10"};
      String[] disc = {"0.05", "0.10", "0.00", "0.01", null, "1.00"};
      for (int i = 0; i < price.length; i++) {
        if (price[i] == null || disc[i] == null) {
          assertEquals(null, got.get(i), "row " + i);
        } else {
          BigDecimal p = new BigDecimal(price[i]);
          BigDecimal d = new BigDecimal(disc[i]);
          BigDecimal want = p.multiply(BigDecimal.ONE.subtract(d)).multiply(BigDecimal.ONE.add(d));
          assertEquals(0, want.compareTo((BigDecimal) got.get(i)), "row " + i + ": " + want + " vs " + got.get(i));
        }
      }
    }
  }

  /** sum DECIMAL(38,2) values from {@code sums} (null entries are NULL), in a one-column table. */
  private VectorSchemaRoot sums(String... sums) {
    DecimalVector v = new DecimalVector("sum", allocator, 38, 2);
    v.allocateNew(sums.length);
    for (int i = 0; i < sums.length; i++) {
      if (sums[i] == null) v.setNull(i); else v.setSafe(i, new BigDecimal(sums[i]));
    }
    v.setValueCount(sums.length);
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(v));
    root.setRowCount(sums.length);
    return root;
  }

  /**
   * Values past 64 bits in a DECIMAL of more than 18 digits are computed exactly in 128 bits, not
   * reported as an overflow: TPC-H q11 at SF30 multiplies a sum by 0.000003333333333333333 and
   * compares the product with sums at scale 2 (21 digits of scaling). Past 38 digits is an overflow.
   */
  @Test
  void decimalsPast64BitsAreExact() {
    String big = "123456789012345.67";
    try (VectorSchemaRoot r = sums("2003609409006.92", "-2003609409006.92", null, "0.01", big, "-" + big)) {
      Expr fraction = lit(new BigDecimal("0.000003333333333333333"));
      List<Object> product = eval(r, call(Op.MUL, col(0), fraction));
      List<Object> compare = eval(r, call(Op.GT, col(0), call(Op.MUL, col(0), fraction)));
      List<Object> sum = eval(r, call(Op.ADD, call(Op.NEG, col(0)), call(Op.MUL, col(0), lit(new BigDecimal("2.5")))));
      List<Object> abs = eval(r, call(Op.ABS, col(0)));
      List<Object> asDouble = eval(r, Expr.cast(call(Op.MUL, col(0), fraction), DataType.FLOAT64));
      List<Object> cut = eval(r, Expr.cast(call(Op.MUL, col(0), lit(1000L)), DataType.decimal(38, 0)));
      // a quotient at scale 18: the dividend scaled by 10^16 first
      List<Object> third = eval(r, call(Op.DIV, col(0), lit(3L)));
      for (int i = 0; i < 6; i++) {
        BigDecimal x = r.getVector(0).isNull(i) ? null : ((DecimalVector) r.getVector(0)).getObject(i);
        if (x == null) {
          assertNull(product.get(i));
          assertNull(compare.get(i));
          continue;
        }
        BigDecimal want = x.multiply(new BigDecimal("0.000003333333333333333"));
        assertEquals(want, product.get(i), "row " + i);
        assertEquals(x.compareTo(want) > 0, compare.get(i), "row " + i);
        assertEquals(x.multiply(new BigDecimal("1.5")), sum.get(i), "row " + i);
        assertEquals(x.abs(), abs.get(i), "row " + i);
        assertEquals(want.doubleValue(), (Double) asDouble.get(i), Math.abs(want.doubleValue()) * 1e-15, "row " + i);
        assertEquals(x.multiply(BigDecimal.valueOf(1000)).setScale(0, java.math.RoundingMode.HALF_UP), cut.get(i), "row " + i);
        assertEquals(x.divide(BigDecimal.valueOf(3), 18, java.math.RoundingMode.HALF_UP), third.get(i), "row " + i);
      }
    }
    // row 1's square has 44 digits, and at scale 23 (to compare with the product) it has 45: past
    // DECIMAL(38), as DuckDB says too; row 0's are exact
    try (VectorSchemaRoot r = sums("2003609409006.92", "99999999999999999999.99")) {
      expectError(r, call(Op.MUL, col(0), col(0)), "numeric overflow in row 1");
      expectError(r, call(Op.GT, col(0), call(Op.MUL, col(0), lit(new BigDecimal("0.000003333333333333333")))),
          "numeric overflow in row 1");
    }
    try (VectorSchemaRoot r = sums("2003609409006.92", null, "-0.01")) {
      // constants past 64 bits, built in 18-digit steps
      BigDecimal c = new BigDecimal("-12345678901234567890.5");
      List<Object> times = eval(r, call(Op.MUL, col(0), lit(c)));
      List<Object> plus = eval(r, call(Op.ADD, col(0), lit(c)));
      // a DOUBLE past 2^63 cast to a DECIMAL of 38 digits: x * 10^2 in double, rounded half away
      List<Object> cast = eval(r, Expr.cast(call(Op.MUL, lit(-1.5e22), call(Op.ABS, col(0))), DataType.decimal(38, 2)));
      for (int i : new int[] {0, 2}) {
        BigDecimal x = ((DecimalVector) r.getVector(0)).getObject(i);
        assertEquals(x.multiply(c), times.get(i), "row " + i);
        assertEquals(x.add(c), plus.get(i), "row " + i);
        double d = -1.5e22 * x.abs().doubleValue() * 100;
        assertEquals(new BigDecimal(d).setScale(0, java.math.RoundingMode.HALF_UP).movePointLeft(2), cast.get(i), "row " + i);
      }
      assertNull(times.get(1));
      assertNull(cast.get(1));
      expectError(r, Expr.cast(lit(1e40), DataType.decimal(38, 2)), "numeric overflow in row 0");
      assertThrows(UserException.class, () -> eval(r, lit(new BigDecimal("1" + "0".repeat(38)))));
    }
    try (VectorSchemaRoot r = sums("2003609409006.92")) {
      BigDecimal x = new BigDecimal("2003609409006.92");
      assertEquals(List.of(x.multiply(x)), eval(r, call(Op.MUL, col(0), col(0))));
    }
  }

  @Test
  void threeValuedLogic() {
    // b: true, false, null, true, null, false; (x > 0): true, true, null, false, true, false
    try (VectorSchemaRoot r = sample()) {
      Expr pos = call(Op.GT, col(0), lit(0));
      assertEquals(Arrays.asList(true, false, null, false, null, false), eval(r, call(Op.AND, col(2), pos)));
      assertEquals(Arrays.asList(true, true, null, true, true, false), eval(r, call(Op.OR, col(2), pos)));
      assertEquals(Arrays.asList(false, true, null, false, null, true), eval(r, call(Op.NOT, col(2))));
      assertEquals(Arrays.asList(false, false, true, false, true, false), eval(r, call(Op.IS_NULL, col(2))));
      // FALSE AND (7 / 0 > 1) is FALSE: the decided side hides the error
      Expr risky = call(Op.GT, call(Op.DIV, col(0), col(1)), lit(1));
      assertEquals(false, eval(r, call(Op.AND, lit(false), risky)).get(1));
    }
  }

  @Test
  void coalesceInBetweenDistinct() {
    try (VectorSchemaRoot r = sample()) {
      assertEquals(Arrays.asList(1, 7, 5, -4, Integer.MAX_VALUE, 0), eval(r, call(Op.COALESCE, col(0), col(1))));
      assertEquals(Arrays.asList(true, true, null, false, false, false), eval(r, call(Op.IN, col(0), lit(1), lit(7), lit(9))));
      assertEquals(Arrays.asList(true, false, null, false, false, true), eval(r, call(Op.BETWEEN, col(0), lit(0), lit(5))));
      // x IS DISTINCT FROM y treats NULLs as values
      assertEquals(Arrays.asList(true, true, true, true, true, true), eval(r, call(Op.IS_DISTINCT_FROM, col(0), col(1))));
      assertEquals(Arrays.asList(false, false, false, false, false, false),
          eval(r, call(Op.IS_NOT_DISTINCT_FROM, col(0), col(1))));
      assertEquals(Arrays.asList(true, true, true, true, true, true),
          eval(r, call(Op.IS_NOT_DISTINCT_FROM, col(2), col(2))));
    }
  }

  @Test
  void floatsOrderNaNAboveAllAndRejectDivisionByZero() {
    try (VectorSchemaRoot r = sample()) {
      // f: 1.5, NaN, -0.0, null, +inf, 2.0
      assertEquals(Arrays.asList(false, true, false, null, true, false), eval(r, call(Op.GT, col(3), lit(1e300))));
      assertEquals(Arrays.asList(false, false, true, null, false, false), eval(r, call(Op.EQ, col(3), lit(0.0))));
      assertEquals(Arrays.asList(3.0, Double.NaN, -0.0, null, Double.POSITIVE_INFINITY, 4.0),
          eval(r, call(Op.MUL, col(3), lit(2.0))));
      expectError(r, call(Op.DIV, col(3), call(Op.SUB, col(3), col(3))), "division by zero in row 0");
    }
  }

  @Test
  void calendarFieldsMatchJavaTime() {
    try (VectorSchemaRoot r = TestTables.allTypes(allocator, 5000, Nulls.every(7), 3); HostTable t = HostTable.fromArrow(r)) {
      for (String name : List.of("date", "ts_utc", "ts_nano")) {
        int c = t.names().indexOf(name);
        long perDay = switch (name) {
          case "date" -> 1L;
          case "ts_utc" -> 86_400_000_000L;
          default -> 86_400_000_000_000L;
        };
        List<Object> years = eval(r, call(Op.EXTRACT_YEAR, col(c)));
        List<Object> months = eval(r, call(Op.EXTRACT_MONTH, col(c)));
        List<Object> days = eval(r, call(Op.EXTRACT_DAY, col(c)));
        FieldVector v = r.getVector(c);
        for (int i = 0; i < 5000; i++) {
          if (v.isNull(i)) {
            assertEquals(null, years.get(i));
            continue;
          }
          long raw = name.equals("date") ? v.getDataBuffer().getInt(4L * i) : v.getDataBuffer().getLong(8L * i);
          java.time.LocalDate d = java.time.LocalDate.ofEpochDay(Math.floorDiv(raw, perDay));
          assertEquals(List.of(d.getYear(), d.getMonthValue(), d.getDayOfMonth()),
              List.of(years.get(i), months.get(i), days.get(i)), name + " row " + i + " = " + d);
        }
      }
      int date = t.names().indexOf("date");
      List<Object> later = eval(r, call(Op.ADD, col(date), lit(30)));
      List<Object> base = eval(r, call(Op.ADD, col(date), lit(0)));
      for (int i = 0; i < 5000; i++) {
        if (base.get(i) != null) {
          assertEquals((Integer) base.get(i) + 30, later.get(i));
        }
      }
    }
  }

  @Test
  void castsRoundAndCheckRanges() {
    try (VectorSchemaRoot r = sample()) {
      // x: 1, 7, null, -4, MAX, 0
      expectError(r, Expr.cast(col(0), DataType.INT16), "numeric overflow in row 4");
      assertEquals(Arrays.asList(true, true, null, true, true, false), eval(r, Expr.cast(col(0), DataType.BOOL)));
      // price DECIMAL(15,2): 10.00, 99.99, 0.01, null, 12345.67, 1.10; half away from zero
      assertEquals(Arrays.asList(10, 100, 0, null, 12346, 1), eval(r, Expr.cast(col(4), DataType.INT32)));
      assertEquals(Arrays.asList(new BigDecimal("10.0"), new BigDecimal("100.0"), new BigDecimal("0.0"), null,
          new BigDecimal("12345.7"), new BigDecimal("1.1")), eval(r, Expr.cast(col(4), DataType.decimal(10, 1))));
      // 99.99 still fits DECIMAL(4, 2); 12345.67 does not
      expectError(r, Expr.cast(col(4), DataType.decimal(4, 2)), "numeric overflow in row 4");
      assertEquals(new BigDecimal("10.0000"), eval(r, Expr.cast(col(4), DataType.decimal(18, 4))).get(0));
    }
    try (VectorSchemaRoot r = table(new Integer[] {0, 0, 0, 0, 0}, new Integer[] {0, 0, 0, 0, 0},
        new Boolean[] {true, true, true, true, true}, new Double[] {2.5, 3.5, -2.5, 1e300, 0.125},
        new String[] {"0.00", "0.00", "0.00", "0.00", "0.00"}, new String[] {"0.00", "0.00", "0.00", "0.00", "0.00"})) {
      // floats to integers: half to even; to decimals: half away from zero
      expectError(r, Expr.cast(col(3), DataType.INT64), "numeric overflow in row 3");
      expectError(r, Expr.cast(col(3), DataType.decimal(5, 2)), "numeric overflow in row 3");
      Expr tame = Expr.caseWhen(List.of(call(Op.GT, col(3), lit(1e10)), lit(0.0)), col(3));
      assertEquals(Arrays.asList(2L, 4L, -2L, 0L, 0L), eval(r, Expr.cast(tame, DataType.INT64)));
      assertEquals(Arrays.asList(new BigDecimal("2.50"), new BigDecimal("3.50"), new BigDecimal("-2.50"), new BigDecimal("0.00"),
          new BigDecimal("0.13")), eval(r, Expr.cast(tame, DataType.decimal(5, 2))));
    }
  }

  @Test
  void mathFunctions() {
    try (VectorSchemaRoot r = sample()) {
      assertEquals(Arrays.asList(1, 7, null, 4, Integer.MAX_VALUE, 0), eval(r, call(Op.ABS, col(0))));
      assertEquals(Arrays.asList(1.0, Math.sqrt(7), null, null, Math.sqrt(Integer.MAX_VALUE), 0.0),
          eval(r, call(Op.SQRT, Expr.caseWhen(List.of(call(Op.LT, col(0), lit(0)), Expr.nullOf(DataType.INT32)), col(0)))));
      expectError(r, call(Op.SQRT, col(0)), "argument outside the function's domain (SQRT of a negative, LN of a non-positive number) in row 3");
      expectError(r, call(Op.LN, col(0)), "argument outside the function's domain (SQRT of a negative, LN of a non-positive number) in row 3");
      assertEquals(1024.0, eval(r, call(Op.POWER, lit(2), lit(10))).get(0));
      // price: 10.00, 99.99, 0.01, null, 12345.67, 1.10 -> DECIMAL(14, 0)
      assertEquals(Arrays.asList(new BigDecimal("10"), new BigDecimal("99"), new BigDecimal("0"), null, new BigDecimal("12345"),
          new BigDecimal("1")), eval(r, call(Op.FLOOR, col(4))));
      assertEquals(Arrays.asList(new BigDecimal("10"), new BigDecimal("100"), new BigDecimal("1"), null, new BigDecimal("12346"),
          new BigDecimal("2")), eval(r, call(Op.CEIL, col(4))));
      assertEquals(Arrays.asList(new BigDecimal("-10"), new BigDecimal("-100"), new BigDecimal("-1"), null,
          new BigDecimal("-12346"), new BigDecimal("-2")), eval(r, call(Op.FLOOR, call(Op.NEG, col(4)))));
      assertEquals(Arrays.asList(new BigDecimal("-10"), new BigDecimal("-99"), new BigDecimal("0"), null,
          new BigDecimal("-12345"), new BigDecimal("-1")), eval(r, call(Op.CEIL, call(Op.NEG, col(4)))));
    }
  }

  private VectorSchemaRoot strings(String... values) {
    org.apache.arrow.vector.VarCharVector v = new org.apache.arrow.vector.VarCharVector("s", allocator);
    v.allocateNew();
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        v.setNull(i);
      } else {
        v.setSafe(i, values[i].getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    v.setValueCount(values.length);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v));
    root.setRowCount(values.length);
    return root;
  }

  private static Expr str(String s) {
    return new Expr.Lit(DataType.STRING, s);
  }

  @Test
  void stringPredicates() {
    try (VectorSchemaRoot r = strings("apple", "", null, "grüne Äpfel", "日本語", "100%", "a_b", "axb")) {
      assertEquals(Arrays.asList(true, false, null, false, false, false, true, true), eval(r, call(Op.LIKE, col(0), str("a%"))));
      assertEquals(Arrays.asList(false, false, null, false, true, false, true, true), eval(r, call(Op.LIKE, col(0), str("___"))));
      assertEquals(Arrays.asList(false, false, null, false, true, false, false, false), eval(r, call(Op.LIKE, col(0), str("日_語"))));
      assertEquals(Arrays.asList(false, false, null, true, false, false, false, false), eval(r, call(Op.LIKE, col(0), str("%Äp%"))));
      assertEquals(Arrays.asList(true, true, null, true, true, true, true, true), eval(r, call(Op.LIKE, col(0), str("%"))));
      assertEquals(Arrays.asList(false, true, null, false, false, false, false, false), eval(r, call(Op.LIKE, col(0), str(""))));
      assertEquals(Arrays.asList(false, false, null, false, false, true, false, false),
          eval(r, call(Op.LIKE, col(0), str("100!%"), str("!"))));
      assertEquals(Arrays.asList(false, false, null, false, false, false, true, false),
          eval(r, call(Op.LIKE, col(0), str("a!_b"), str("!"))));
      assertEquals(Arrays.asList(false, true, null, true, true, true, true, true),
          eval(r, call(Op.NOT, call(Op.LIKE, col(0), str("ap%")))));
      assertEquals(Arrays.asList(5, 0, null, 11, 3, 4, 3, 3), eval(r, call(Op.CHAR_LENGTH, col(0))));
      // unsigned byte order: "" < "100%" < "a_b" < "apple" < "axb" < "grüne" < "日本語"
      assertEquals(Arrays.asList(true, true, null, false, false, true, true, true), eval(r, call(Op.LT, col(0), str("b"))));
      assertEquals(Arrays.asList(false, false, null, true, true, false, false, false), eval(r, call(Op.GT, col(0), str("axb"))));
      assertEquals(Arrays.asList(true, false, null, false, true, false, false, false),
          eval(r, call(Op.IN, col(0), str("apple"), str("日本語"))));
      try (HostTable t = HostTable.fromArrow(r)) {
        assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.LIKE, col(0), str("a"), str("!!"))));
        assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.LIKE, col(0), str("a!"), str("!"))));
        assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.SUBSTRING, col(0), lit(1), lit(-1))));
      }
    }
  }

  private List<Object> texts(VectorSchemaRoot r, Expr e) {
    return eval(r, e).stream().<Object>map(o -> o == null ? null : o.toString()).toList();
  }

  @Test
  void stringFunctions() {
    try (VectorSchemaRoot r = strings("apple", "", null, "  grüne Äpfel ", "日本語", "a_b")) {
      assertEquals(Arrays.asList("apple", "", null, "  grüne Äpfel ", "日本語", "a_b"), texts(r, col(0)));
      assertEquals(Arrays.asList("pp", "", null, " g", "本語", "_b"), texts(r, call(Op.SUBSTRING, col(0), lit(2), lit(2))));
      assertEquals(Arrays.asList("pple", "", null, " grüne Äpfel ", "本語", "_b"), texts(r, call(Op.SUBSTRING, col(0), lit(2))));
      // SQL counts positions before the first character: SUBSTRING(s, 0, 3) is the first two
      assertEquals(Arrays.asList("ap", "", null, "  ", "日本", "a_"), texts(r, call(Op.SUBSTRING, col(0), lit(0), lit(3))));
      assertEquals(Arrays.asList("", "", null, "", "", ""), texts(r, call(Op.SUBSTRING, col(0), lit(-5), lit(2))));
      assertEquals(Arrays.asList("apple", "", null, "grüne Äpfel", "日本語", "a_b"), texts(r, call(Op.TRIM, col(0))));
      assertEquals(Arrays.asList("apple", "", null, "grüne Äpfel ", "日本語", "a_b"), texts(r, call(Op.LTRIM, col(0))));
      assertEquals(Arrays.asList("apple", "", null, "  grüne Äpfel", "日本語", "a_b"), texts(r, call(Op.RTRIM, col(0))));
      assertEquals(Arrays.asList(0, 0, null, 9, 0, 0), eval(r, call(Op.POSITION, str("Äp"), col(0))));
      assertEquals(Arrays.asList(0, 0, null, 0, 2, 0), eval(r, call(Op.POSITION, str("本"), col(0))));
      assertEquals(Arrays.asList(1, 1, null, 1, 1, 1), eval(r, call(Op.POSITION, str(""), col(0))));
      assertEquals(Arrays.asList("apple", "", "none", "  grüne Äpfel ", "日本語", "a_b"),
          texts(r, call(Op.COALESCE, col(0), str("none"))));
      assertEquals(Arrays.asList("short", "short", null, "long", "short", "short"), texts(r, Expr.caseWhen(
          List.of(call(Op.GT, call(Op.CHAR_LENGTH, col(0)), lit(5)), str("long")), call(Op.SUBSTRING, str("shorter"), lit(1),
              Expr.caseWhen(List.of(call(Op.IS_NULL, col(0)), Expr.nullOf(DataType.INT32)), lit(5))))));
    }
  }

  /** Months, days and milliseconds added to dates and timestamps, against java.time. */
  @Test
  void calendarArithmeticMatchesJavaTime() {
    try (VectorSchemaRoot r = TestTables.allTypes(allocator, 5000, Nulls.every(7), 5); HostTable t = HostTable.fromArrow(r)) {
      int date = t.names().indexOf("date");
      int ts = t.names().indexOf("ts_utc");
      FieldVector dv = r.getVector(date);
      FieldVector tv = r.getVector(ts);
      for (long k : List.of(1L, -1L, 13L, -25L, 1200L)) {
        List<Object> dates = eval(r, call(Op.ADD_MONTHS, col(date), lit(k)));
        List<Object> stamps = eval(r, call(Op.ADD_MONTHS, col(ts), lit(k)));
        for (int i = 0; i < 5000; i++) {
          if (dv.isNull(i)) {
            assertEquals(null, dates.get(i));
          } else {
            java.time.LocalDate d = java.time.LocalDate.ofEpochDay(dv.getDataBuffer().getInt(4L * i));
            assertEquals((int) d.plusMonths(k).toEpochDay(), dates.get(i), d + " + " + k + " months");
          }
          if (!tv.isNull(i)) {
            long micros = tv.getDataBuffer().getLong(8L * i);
            java.time.LocalDateTime at = java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                (int) Math.floorMod(micros, 1_000_000L) * 1000, java.time.ZoneOffset.UTC);
            java.time.LocalDateTime want = at.plusMonths(k);
            long wantMicros = want.toEpochSecond(java.time.ZoneOffset.UTC) * 1_000_000L + want.getNano() / 1000;
            assertEquals(wantMicros, stamps.get(i), at + " + " + k + " months");
          }
        }
      }
      List<Object> days = eval(r, call(Op.ADD_DAYS, col(date), lit(-45)));
      List<Object> millis = eval(r, call(Op.ADD_MILLIS, col(ts), lit(90_061_001L)));
      for (int i = 0; i < 5000; i++) {
        if (!dv.isNull(i)) {
          assertEquals(dv.getDataBuffer().getInt(4L * i) - 45, days.get(i));
        }
        // ts_utc holds microseconds: 90,061,001 ms is 90,061,001,000 of them
        assertEquals(tv.isNull(i) ? null : tv.getDataBuffer().getLong(8L * i) + 90_061_001_000L, millis.get(i), "row " + i);
      }
      try (VectorSchemaRoot s = sample(); HostTable h = HostTable.fromArrow(s)) {
        assertThrows(UserException.class, () -> Evaluate.evaluate(exec, h, call(Op.ADD_MONTHS, col(4), lit(1))));
        assertThrows(UserException.class, () -> Evaluate.evaluate(exec, h,
            call(Op.ADD_MONTHS, Expr.cast(col(0), DataType.DATE), lit(1.5))));
      }
    }
  }

  @Test
  void stringsCastToValues() {
    try (VectorSchemaRoot r = strings(" 42 ", "-7", null, "+0", "9223372036854775807", "007")) {
      assertEquals(Arrays.asList(42L, -7L, null, 0L, Long.MAX_VALUE, 7L), eval(r, Expr.cast(col(0), DataType.INT64)));
      assertEquals(Arrays.asList(42.0, -7.0, null, 0.0, 9.223372036854776E18, 7.0).subList(0, 4),
          eval(r, Expr.cast(call(Op.SUBSTRING, col(0), lit(1), lit(4)), DataType.FLOAT64)).subList(0, 4));
    }
    try (VectorSchemaRoot r = strings("1.005", "-2.5", "0.0049", ".5", "12", "999.994")) {
      assertEquals(Arrays.asList(new BigDecimal("1.01"), new BigDecimal("-2.50"), new BigDecimal("0.00"), new BigDecimal("0.50"),
          new BigDecimal("12.00"), new BigDecimal("999.99")), eval(r, Expr.cast(col(0), DataType.decimal(5, 2))));
      assertEquals(Arrays.asList(1.005, -2.5, 0.0049, 0.5, 12.0, 999.994), eval(r, Expr.cast(col(0), DataType.FLOAT64)));
    }
    try (VectorSchemaRoot r = strings("2024-02-29", " 1999-12-31", "0001-01-01", "TRUE", "false", "NaN")) {
      List<Object> dates = eval(r, Expr.caseWhen(List.of(call(Op.LIKE, col(0), str("%-%")), Expr.cast(col(0), DataType.DATE)),
          Expr.nullOf(DataType.DATE)));
      assertEquals(Arrays.asList((int) java.time.LocalDate.of(2024, 2, 29).toEpochDay(),
          (int) java.time.LocalDate.of(1999, 12, 31).toEpochDay(), (int) java.time.LocalDate.of(1, 1, 1).toEpochDay(), null,
          null, null), dates);
      assertEquals(Arrays.asList(null, null, null, true, false, null), eval(r, Expr.caseWhen(
          List.of(call(Op.IN, call(Op.CHAR_LENGTH, col(0)), lit(4), lit(5)), Expr.cast(col(0), DataType.BOOL)),
          Expr.nullOf(DataType.BOOL))));
    }
    try (VectorSchemaRoot r = strings("12", "1x", "99999", "2023-02-29", "0.1", "1234567890.12345678")) {
      try (HostTable t = HostTable.fromArrow(r)) {
        UserException bad = assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, Expr.cast(col(0), DataType.INT32)));
        assertEquals("cannot cast '1x' to INT32 in row 1", bad.getMessage());
        UserException range = assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t,
            Expr.cast(call(Op.SUBSTRING, col(0), lit(1), lit(5)), DataType.decimal(4, 1))));
        assertEquals("cannot cast '1x' to DECIMAL(4, 1) in row 1", range.getMessage());
        UserException date = assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t,
            Expr.caseWhen(List.of(call(Op.LIKE, col(0), str("%-%")), Expr.cast(col(0), DataType.DATE)), Expr.nullOf(DataType.DATE))));
        assertEquals("cannot cast '2023-02-29' to DATE in row 3", date.getMessage());
        NotSupportedException inexact = assertThrows(NotSupportedException.class, () -> Evaluate.evaluate(exec, t,
            Expr.caseWhen(List.of(call(Op.GT, call(Op.CHAR_LENGTH, col(0)), lit(10)), Expr.cast(col(0), DataType.FLOAT64)),
                Expr.nullOf(DataType.FLOAT64))));
        assertTrue(inexact.getMessage().contains("'1234567890.12345678'"), inexact.getMessage());
      }
    }
  }

  @Test
  void stringsBuiltAnew() {
    try (VectorSchemaRoot r = strings("apple", "", null, "grüne Äpfel straße", "日本語", "ǅ İ ı")) {
      assertEquals(Arrays.asList("apple|", "|", null, "grüne Äpfel straße|", "日本語|", "ǅ İ ı|"),
          texts(r, call(Op.CONCAT, col(0), str("|"))));
      assertEquals(Arrays.asList("appleapple", "", null, "grüne Äpfel straßegrüne Äpfel straße", "日本語日本語", "ǅ İ ıǅ İ ı"),
          texts(r, call(Op.CONCAT, col(0), col(0))));
      assertEquals(Arrays.asList(null, null, null, null, null, null), texts(r, call(Op.CONCAT, col(0), Expr.nullOf(DataType.STRING))));
      // Java's simple (one code point to one) case mapping: ß stays, İ lowers to i, ı uppers to I
      assertEquals(Arrays.asList("APPLE", "", null, "GRÜNE ÄPFEL STRAßE", "日本語", "Ǆ İ I"), texts(r, call(Op.UPPER, col(0))));
      assertEquals(Arrays.asList("apple", "", null, "grüne äpfel straße", "日本語", "ǆ i ı"), texts(r, call(Op.LOWER, col(0))));
      assertEquals(Arrays.asList("a<pp><pp>le", "", null, "grüne Ä<pp>fel straße", "日本語", "ǅ İ ı"),
          texts(r, call(Op.REPLACE, col(0), str("p"), str("<pp>"))));
      assertEquals(Arrays.asList("apple", "", null, "grüne Äpfel straße", "日語", "ǅ İ ı"),
          texts(r, call(Op.REPLACE, call(Op.REPLACE, col(0), str("本"), str("")), str(""), str("x"))));
      assertEquals(Arrays.asList("日.apple", "日.日.日.日", null, "grüne Ä", "日.日.日本語", "日.ǅ İ ı"),
          texts(r, call(Op.LPAD, col(0), lit(7L), str("日."))));
      assertEquals(Arrays.asList("ap", "--", null, "gr", "日本", "ǅ "), texts(r, call(Op.RPAD, col(0), lit(2L), str("-"))));
      assertEquals(Arrays.asList("", "", null, "", "", ""), texts(r, call(Op.RPAD, col(0), lit(-3L), str("-"))));
      assertEquals(Arrays.asList("apple", "", null, "grüne Äpfel straße", "日本語", "ǅ İ ı"),
          texts(r, call(Op.LPAD, col(0), lit(40L), str(""))), "an empty fill adds nothing (PostgreSQL)");
      // built strings feed the interpreter like columns: predicates, lengths, nesting
      assertEquals(Arrays.asList(true, false, null, false, false, false),
          eval(r, call(Op.LIKE, call(Op.UPPER, col(0)), str("A%"))));
      assertEquals(Arrays.asList(7, 2, null, 20, 5, 7), eval(r, call(Op.CHAR_LENGTH,
          call(Op.CONCAT, call(Op.LOWER, call(Op.CONCAT, str("<"), col(0))), str(">")))));
      assertEquals(Arrays.asList("APPLE", "", "?", "GRÜNE ÄPFEL STRAßE", "日本語", "Ǆ İ I"),
          texts(r, call(Op.COALESCE, call(Op.UPPER, col(0)), str("?"))));
    }
    try (VectorSchemaRoot t = sample()) {
      assertEquals(Arrays.asList("1", "7", null, "-4", "2147483647", "0"), texts(t, Expr.cast(col(0), DataType.STRING)));
      assertEquals(Arrays.asList("10.00", "99.99", "0.01", null, "12345.67", "1.10"), texts(t, Expr.cast(col(4), DataType.STRING)));
      assertEquals(Arrays.asList("-0.05", "-0.10", "0.00", "-0.01", null, "-1.00"),
          texts(t, Expr.cast(call(Op.NEG, col(5)), DataType.STRING)));
      assertEquals(Arrays.asList("TRUE", "FALSE", null, "TRUE", null, "FALSE"), texts(t, Expr.cast(col(2), DataType.STRING)));
      assertEquals(Arrays.asList("x=1", "x=7", null, "x=-4", "x=2147483647", "x=0"),
          texts(t, call(Op.CONCAT, str("x="), Expr.cast(col(0), DataType.STRING))));
      try (HostTable h = HostTable.fromArrow(t)) {
        NotSupportedException e = assertThrows(NotSupportedException.class,
            () -> Evaluate.evaluate(exec, h, Expr.cast(col(3), DataType.STRING)));
        assertTrue(e.getMessage().contains("FLOAT64"), e.getMessage());
        assertThrows(UserException.class, () -> Evaluate.evaluate(exec, h, call(Op.UPPER, col(0))));
        assertEquals(DataType.STRING, Evaluate.typeOf(call(Op.CONCAT, str("a"), Expr.cast(col(0), DataType.STRING)), h.types()));
        assertEquals(DataType.BOOL, Evaluate.typeOf(call(Op.EQ, call(Op.LOWER, str("A")), str("a")), h.types()));
      }
    }
  }

  @Test
  void roundAndSign() {
    try (VectorSchemaRoot t = sample()) {
      // price DECIMAL(15,2): 10.00 99.99 0.01 null 12345.67 1.10
      assertEquals(Arrays.asList(new BigDecimal("10.00"), new BigDecimal("100.00"), new BigDecimal("0.00"), null,
          new BigDecimal("12345.70"), new BigDecimal("1.10")), eval(t, call(Op.ROUND, col(4), lit(1))));
      assertEquals(Arrays.asList(new BigDecimal("0.00"), new BigDecimal("100.00"), new BigDecimal("0.00"), null,
          new BigDecimal("12300.00"), new BigDecimal("0.00")), eval(t, call(Op.ROUND, col(4), lit(-2))));
      assertEquals(Arrays.asList(new BigDecimal("-0.10"), new BigDecimal("-0.10"), new BigDecimal("0.00"),
          new BigDecimal("-0.00"), null, new BigDecimal("-1.00")), eval(t, call(Op.ROUND, call(Op.NEG, col(5)), lit(1))));
      // y INT32: 2 0 5 3 1 null; half away from zero at the tens
      assertEquals(Arrays.asList(0, 0, 10, 0, 0, null), eval(t, call(Op.ROUND, col(1), lit(-1))));
      assertEquals(Arrays.asList(0, 0, -10, 0, 0, null), eval(t, call(Op.ROUND, call(Op.NEG, col(1)), lit(-1))));
      assertEquals(Arrays.asList(1, 7, null, -4, Integer.MAX_VALUE, 0), eval(t, call(Op.ROUND, col(0))));
      // f FLOAT64: 1.5 NaN -0.0 null inf 2.0
      List<Object> r = eval(t, call(Op.ROUND, col(3)));
      assertEquals(Arrays.asList(2.0, Double.NaN, -0.0, null, Double.POSITIVE_INFINITY, 2.0), r);
      assertEquals(Arrays.asList(-2.5, Double.NaN, -1.0, null, Double.NEGATIVE_INFINITY, -3.0),
          eval(t, call(Op.ROUND, call(Op.NEG, call(Op.ADD, col(3), lit(0.96))), lit(1))));
      assertEquals(Arrays.asList(1, 1, null, -1, 1, 0), eval(t, call(Op.SIGN, col(0))));
      assertEquals(Arrays.asList(1.0, Double.NaN, -0.0, null, 1.0, 1.0), eval(t, call(Op.SIGN, col(3))));
      assertEquals(Arrays.asList(new BigDecimal("-1.00"), new BigDecimal("-1.00"), new BigDecimal("0.00"),
          new BigDecimal("-1.00"), null, new BigDecimal("-1.00")), eval(t, call(Op.SIGN, call(Op.NEG, col(5)))));
      try (HostTable h = HostTable.fromArrow(t)) {
        // x INT32 holds MAX_VALUE in row 4, which rounds to 2147483650
        UserException e = assertThrows(UserException.class, () -> Evaluate.evaluate(exec, h, call(Op.ROUND, col(0), lit(-1))));
        assertTrue(e.getMessage().contains("overflow in row 4"), e.getMessage());
        assertThrows(NotSupportedException.class, () -> Evaluate.evaluate(exec, h, call(Op.ROUND, col(4), col(0))));
      }
    }
  }

  /** LIKE against java.util.regex on random strings and patterns over a small multi-byte alphabet. */
  @Test
  void likeAgreesWithRegex() {
    String[] alphabet = {"a", "b", "é", "日"};
    String[] patternAlphabet = {"a", "b", "é", "日", "%", "_"};
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(42);
    String[] values = new String[400];
    for (int i = 0; i < values.length; i++) {
      StringBuilder b = new StringBuilder();
      for (int k = rnd.nextInt(8); k > 0; k--) {
        b.append(alphabet[rnd.nextInt(alphabet.length)]);
      }
      values[i] = b.toString();
    }
    try (VectorSchemaRoot r = strings(values)) {
      for (int t = 0; t < 150; t++) {
        StringBuilder pattern = new StringBuilder();
        StringBuilder regex = new StringBuilder();
        for (int k = rnd.nextInt(6); k > 0; k--) {
          String c = patternAlphabet[rnd.nextInt(patternAlphabet.length)];
          pattern.append(c);
          regex.append(c.equals("%") ? ".*" : c.equals("_") ? "." : java.util.regex.Pattern.quote(c));
        }
        java.util.regex.Pattern re = java.util.regex.Pattern.compile(regex.toString(), java.util.regex.Pattern.DOTALL);
        List<Object> got = eval(r, call(Op.LIKE, col(0), str(pattern.toString())));
        for (int i = 0; i < values.length; i++) {
          assertEquals(re.matcher(values[i]).matches(), got.get(i), "'" + values[i] + "' LIKE '" + pattern + "'");
        }
      }
    }
  }

  @Test
  void badTypesAreClearErrors() {
    try (VectorSchemaRoot r = TestTables.allTypes(allocator, 3, Nulls.NONE, 1); HostTable t = HostTable.fromArrow(r)) {
      int i32 = t.names().indexOf("i32");
      int str = t.names().indexOf("str");
      int date = t.names().indexOf("date");
      assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.AND, col(i32), col(i32))));
      assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.EQ, col(date), col(i32))));
      assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.ADD, col(99), lit(1))));
      assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.EQ, col(str), col(i32))));
      assertThrows(UserException.class, () -> Evaluate.evaluate(exec, t, call(Op.LIKE, col(i32), str("1%"))));
    }
  }

  /** Expressions over the random all-types table, for GPU == CPU. */
  static List<Expr> randomSuite(List<String> names) {
    int i8 = names.indexOf("i8");
    int i16 = names.indexOf("i16");
    int i32 = names.indexOf("i32");
    int f32 = names.indexOf("f32");
    int f64 = names.indexOf("f64");
    int dec = names.indexOf("dec18");
    int b = names.indexOf("bool");
    int date = names.indexOf("date");
    return List.of(
        // SMALLINT + SMALLINT is SMALLINT in SQL and overflows on random data; widen first
        call(Op.ADD, col(i8), call(Op.ADD, col(i16), lit(100_000))),
        call(Op.MUL, col(i16), call(Op.MUL, col(i16), lit(1L))),
        call(Op.SUB, call(Op.MUL, col(i8), lit(1000)), col(i16)),
        call(Op.DIV, col(i32), Expr.caseWhen(List.of(call(Op.EQ, col(i8), lit(0)), lit(1)), col(i8))),
        call(Op.MOD, col(i32), lit(97)),
        call(Op.ADD, col(f32), col(f32)),
        call(Op.DIV, col(f64), call(Op.ADD, col(f32), lit(3.5))),
        call(Op.ADD, col(dec), col(i16)),
        call(Op.GT, col(dec), lit(new BigDecimal("1.5"))),
        call(Op.AND, col(b), call(Op.LT, col(f64), lit(0.0))),
        call(Op.OR, call(Op.IS_NULL, col(i32)), call(Op.GE, col(date), col(date))),
        call(Op.COALESCE, col(i8), col(i16), lit(-1)),
        Expr.caseWhen(List.of(col(b), col(i8)), Expr.nullOf(DataType.INT8)),
        call(Op.IN, col(i8), lit(1), lit(2), lit(3), Expr.nullOf(DataType.INT8)),
        call(Op.BETWEEN, col(f64), lit(-0.5), lit(0.5)),
        call(Op.IS_DISTINCT_FROM, col(i8), col(i8)),
        Expr.caseWhen(List.of(col(b), col(f32), call(Op.GT, col(i8), lit(0)), col(i16)), col(dec)),
        call(Op.EXTRACT_YEAR, col(date)),
        call(Op.EXTRACT_DAY, col(names.indexOf("ts_utc"))),
        call(Op.EXTRACT_MONTH, call(Op.SUB, col(date), lit(1))),
        // NaN and infinities have no decimal value: cast only the finite ones
        Expr.caseWhen(List.of(call(Op.BETWEEN, col(f32), lit(-1e7), lit(1e7)), Expr.cast(col(f32), DataType.decimal(18, 3))),
            Expr.nullOf(DataType.decimal(18, 3))),
        Expr.cast(col(dec), DataType.INT64),
        Expr.cast(Expr.cast(col(i16), DataType.FLOAT32), DataType.INT16),
        call(Op.ABS, col(i32)),
        call(Op.SQRT, call(Op.ABS, col(f64))),
        call(Op.FLOOR, col(dec)),
        call(Op.CEIL, col(f64)),
        call(Op.LIKE, col(names.indexOf("str")), str("%é%")),
        call(Op.LIKE, col(names.indexOf("str")), str("_本%")),
        call(Op.OR, call(Op.LT, col(names.indexOf("str")), str("n")), call(Op.GT, call(Op.CHAR_LENGTH, col(names.indexOf("str"))), lit(5))),
        call(Op.SUBSTRING, col(names.indexOf("str")), lit(2), lit(3)),
        call(Op.COALESCE, call(Op.TRIM, col(names.indexOf("str"))), str("—")),
        call(Op.POSITION, str("é"), col(names.indexOf("str"))),
        // a typed NULL string constant has a length of its own (it was once read uninitialized)
        call(Op.CHAR_LENGTH, new Expr.Lit(DataType.STRING, null)),
        call(Op.TRIM, new Expr.Lit(DataType.STRING, null)),
        call(Op.CONCAT, call(Op.UPPER, col(names.indexOf("str"))), call(Op.LOWER, col(names.indexOf("str")))),
        call(Op.REPLACE, col(names.indexOf("str")), str("a"), str("<é>")),
        call(Op.REPLACE, col(names.indexOf("str")), col(names.indexOf("str")), str("")),
        call(Op.LPAD, col(names.indexOf("str")), lit(7L), str("éx")),
        call(Op.RPAD, col(names.indexOf("str")), Expr.cast(call(Op.MOD, col(i8), lit((byte) 9)), DataType.INT64),
            col(names.indexOf("str"))),
        call(Op.CONCAT, Expr.cast(col(i32), DataType.STRING), Expr.cast(col(dec), DataType.STRING)),
        call(Op.CONCAT, Expr.cast(col(date), DataType.STRING), Expr.cast(col(b), DataType.STRING)),
        Expr.cast(col(i8), DataType.STRING),
        call(Op.ROUND, col(dec), lit(2)),
        call(Op.ROUND, col(f64), lit(3)),
        call(Op.ROUND, col(i32), lit(-3)),
        call(Op.SIGN, col(f32)),
        call(Op.ADD_MONTHS, col(date), col(i8)),
        Expr.cast(Expr.cast(col(i32), DataType.STRING), DataType.INT32),
        Expr.cast(Expr.cast(col(dec), DataType.STRING), DataType.decimal(18, 4)),
        Expr.cast(Expr.cast(col(dec), DataType.STRING), DataType.decimal(18, 1)),
        Expr.cast(Expr.cast(col(date), DataType.STRING), DataType.DATE),
        Expr.cast(call(Op.CONCAT, Expr.cast(col(i16), DataType.STRING), str(".25e1")), DataType.FLOAT64),
        call(Op.ADD_MONTHS, col(names.indexOf("ts_utc")), lit(-14)),
        call(Op.ADD_DAYS, col(names.indexOf("ts_utc")), col(i16)),
        call(Op.ADD_MILLIS, col(names.indexOf("ts_utc")), lit(-1234L)),
        Expr.cast(col(names.indexOf("dec38")), DataType.STRING),
        Expr.cast(col(names.indexOf("i64")), DataType.STRING),
        call(Op.EQ, call(Op.LOWER, col(names.indexOf("str"))), col(names.indexOf("str"))),
        // past 64 bits: run again in 128 on the host (from the device too)
        call(Op.MUL, col(dec), col(dec)),
        call(Op.ADD, col(names.indexOf("dec38")), lit(1)),
        // an INT32 scaled by 10^25 (two steps) to meet the product
        call(Op.GT, col(i32), call(Op.MUL, col(dec), lit(new BigDecimal("0.000003333333333333333")))),
        call(Op.DIV, col(dec), lit(7)));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000})
  void cpuRunsTheSuiteOnRandomData(int rows) {
    for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
      try (VectorSchemaRoot r = TestTables.allTypes(allocator, rows, nulls, rows); HostTable t = HostTable.fromArrow(r)) {
        for (Expr e : randomSuite(t.names())) {
          try (HostColumn c = Evaluate.evaluate(exec, t, e)) {
            assertEquals(rows, c.rowCount());
            assertEquals(Evaluate.typeOf(e, t.types()), c.type());
            if (nulls == Nulls.ALL && !e.toString().contains("IS_DISTINCT") && !e.toString().contains("IS_NULL")
                && !e.toString().contains("COALESCE")) {
              assertEquals(rows, c.nullCount(), e.toString());
            }
          }
        }
      }
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 70_001})
  void gpuMatchesTheCpuTwin(int rows) {
    withGeneratedFrom(Integer.MAX_VALUE, () -> gpuAgreesWithCpu(rows, 0));
  }

  /** {@link #gpuMatchesTheCpuTwin} on millions of rows (grid-stride loops, many blocks), in the {@code gpu-heavy} suite. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {1_000_003})
  void gpuMatchesTheCpuTwinOnManyRows(int rows) {
    gpuMatchesTheCpuTwin(rows);
  }

  /** The suite again with every arithmetic-only program in a kernel generated for it ({@link PtxProgram}). */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 70_001})
  void generatedKernelsMatchTheCpuTwin(int rows) {
    List<String> names = allTypesSchema(HostTable::names);
    List<DataType> types = allTypesSchema(HostTable::types);
    java.util.Set<String> generated = new java.util.HashSet<>();
    for (Expr e : randomSuite(names)) {
      if (!StringBuild.anywhere(e, types)) {
        Program p = ExprCompiler.compile(e, types);
        Evaluate.StoreKind store = Evaluate.storeKind(p.result());
        if (PtxProgram.supports(p, store)) {
          // programs that differ only in their literals share a kernel
          generated.add(PtxProgram.generate(p, store));
        }
      }
    }
    assertTrue(generated.size() >= 20, "the suite has " + generated.size() + " arithmetic-only programs");
    withGeneratedFrom(0, () -> gpuAgreesWithCpu(rows, generated.size()));
  }

  /** {@link #generatedKernelsMatchTheCpuTwin} on millions of rows (grid-stride loops, many blocks), in the {@code gpu-heavy} suite. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {1_000_003})
  void generatedKernelsMatchTheCpuTwinOnManyRows(int rows) {
    generatedKernelsMatchTheCpuTwin(rows);
  }

  /**
   * String columns compared with constants ({@link StringMatch}, one kernel ahead of the program):
   * every form it takes equals the CPU twin's comparisons and LIKE, on multi-byte UTF-8, the empty
   * string, NULLs and a sliced table; forms it must leave to the interpreter are not taken.
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 70_001})
  void stringMatchesMatchTheCpuTwin(int rows) {
    List<String> names = allTypesSchema(HostTable::names);
    List<DataType> types = allTypesSchema(HostTable::types);
    Expr s = col(names.indexOf("str"));
    List<Expr> likes = java.util.stream.Stream.of("na%", "%é", "%🚀%", "%", "%%", "", "héllo", "a%b", "Z%h", "%ï%é", "%a%a%", "%🚀%🎉%", "%x%xx%x")
        .map(p -> call(Op.LIKE, s, str(p))).toList();
    List<Expr> taken = new ArrayList<>(likes);
    taken.addAll(List.of(
        call(Op.EQ, s, str("héllo")),
        call(Op.EQ, str("Ωmega"), s),
        call(Op.NE, s, str("")),
        call(Op.IN, s, str("a"), str("Zürich"), str("😀"), str("absent")),
        call(Op.OR, call(Op.EQ, s, str("a")), call(Op.EQ, str("naïve café"), s)),
        call(Op.AND, call(Op.NE, s, str("a")), call(Op.NE, s, str("x".repeat(70)))),
        call(Op.NOT, call(Op.LIKE, s, str("%x%"))),
        Expr.caseWhen(List.of(call(Op.EQ, s, str("a")), lit(1)), lit(0)),
        call(Op.AND, call(Op.LIKE, s, str("%a%")), call(Op.GT, col(names.indexOf("i32")), lit(0)))));
    List<Expr> left = List.of(
        call(Op.LIKE, s, str("h_llo")),
        call(Op.LIKE, s, str("%_%")),
        call(Op.IN, s, str("a"), new Expr.Lit(DataType.STRING, null)),
        call(Op.EQ, s, s),
        call(Op.LT, s, str("b")));
    for (Expr e : taken) {
      assertTrue(StringMatch.anywhere(e, types), e.toString());
    }
    for (Expr e : left) {
      assertFalse(StringMatch.anywhere(e, types), e.toString());
    }
    withGeneratedFrom(0, () -> {
      try (Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20); Exec g = Exec.onGpu(gpu, allocator)) {
        for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
          for (boolean sliced : rows > 3 ? List.of(false, true) : List.of(false)) {
            try (VectorSchemaRoot whole = TestTables.allTypes(allocator, rows, nulls, rows);
                VectorSchemaRoot part = sliced ? TestTables.slice(whole, 3, rows - 3) : null) {
              VectorSchemaRoot r = part == null ? whole : part;
              try (HostTable h = HostTable.fromArrow(r); DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
                for (Expr e : java.util.stream.Stream.concat(taken.stream(), left.stream()).toList()) {
                  try (HostColumn want = Evaluate.evaluate(exec, h, e); DeviceColumn got = Evaluate.evaluate(g, d, e)) {
                    assertEquals(want.nullCount(), got.nullCount(), e + " " + nulls);
                    got.retain();
                    try (DeviceTable one = new DeviceTable(gpu, List.of("x"), List.of(got), h.rowCount());
                        VectorSchemaRoot back = one.toArrow(allocator, g.stream())) {
                      for (int i = 0; i < h.rowCount(); i++) {
                        assertEquals(want.vector().getObject(i), back.getVector(0).getObject(i),
                            e + " " + nulls + (sliced ? " sliced" : "") + " row " + i);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    });
  }

  /**
   * LIKE searches with pieces between '%'s (the match kernel's whole-warp search) over one column
   * of short rows and of 1,000-byte rows, several steps of the warp each; slices put both kinds in
   * one warp. Each row's answer equals the CPU twin's, NULLs, multi-byte UTF-8, pieces at a row's
   * ends and overlapping pieces included.
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 100, 1000})
  void stringSearchesOfShortAndLongRowsMatchTheCpuTwin(int rows) {
    String[] shorts = {"xabycdz", "cdab", "", "héab🚀llocd", "abcd", "abab", "ab", "ccddabcd", "日本ab語cd"};
    String[] values = new String[rows];
    for (int i = 0; i < rows; i++) {
      if (i % 5 == 4) {
        continue;
      }
      // every third warp of rows long: pieces placed by the row, sometimes missing
      values[i] = (i / 32) % 3 == 1
          ? "q".repeat(i % 13) + (i % 4 == 0 ? "" : "ab") + "é".repeat(500) + (i % 3 == 0 ? "" : "cd") + "q".repeat(i % 7)
          : shorts[i % shorts.length];
    }
    List<Expr> likes = java.util.stream.Stream.of("%ab%cd%", "%cd%ab%", "%ab%ab%", "%🚀%cd%", "x%ab%", "%ab%cd", "q%é%cd%q", "%b%%c%")
        .map(pt -> call(Op.LIKE, col(0), str(pt))).toList();
    withGeneratedFrom(0, () -> {
      try (Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20); Exec g = Exec.onGpu(gpu, allocator);
          VectorSchemaRoot whole = strings(values)) {
        for (boolean sliced : rows > 3 ? List.of(false, true) : List.of(false)) {
          try (VectorSchemaRoot part = sliced ? TestTables.slice(whole, 3, rows - 3) : null) {
            VectorSchemaRoot r = part == null ? whole : part;
            try (HostTable h = HostTable.fromArrow(r); DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
              for (Expr e : likes) {
                assertTrue(StringMatch.anywhere(e, h.types()), e.toString());
                try (HostColumn want = Evaluate.evaluate(exec, h, e); DeviceColumn got = Evaluate.evaluate(g, d, e)) {
                  got.retain();
                  try (DeviceTable one = new DeviceTable(gpu, List.of("x"), List.of(got), h.rowCount());
                      VectorSchemaRoot back = one.toArrow(allocator, g.stream())) {
                    for (int i = 0; i < h.rowCount(); i++) {
                      assertEquals(want.vector().getObject(i), back.getVector(0).getObject(i),
                          e + (sliced ? " sliced" : "") + " row " + i);
                    }
                  }
                }
              }
            }
          }
        }
      }
    });
  }

  /** What {@code read} gives of an empty {@link TestTables#allTypes} table (its names, its types). */
  private <T> T allTypesSchema(java.util.function.Function<HostTable, T> read) {
    try (VectorSchemaRoot r = TestTables.allTypes(allocator, 0, Nulls.NONE, 0); HostTable h = HostTable.fromArrow(r)) {
      return read.apply(h);
    }
  }

  /** Runs {@code body} with {@link Evaluate#setGeneratedMinRows} at {@code rows}, then restores it. */
  private static void withGeneratedFrom(int rows, Runnable body) {
    int before = Evaluate.setGeneratedMinRows(rows);
    try {
      body.run();
    } finally {
      Evaluate.setGeneratedMinRows(before);
    }
  }

  /** GPU == CPU over the random suite; at least {@code generated} programs must have run as generated kernels. */
  private void gpuAgreesWithCpu(int rows, int generated) {
    try (Gpu gpu = Gpu.open(0, 2L << 30, 256L << 20); Exec g = Exec.onGpu(gpu, allocator)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot r = TestTables.allTypes(allocator, rows, nulls, rows); HostTable h = HostTable.fromArrow(r);
            DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
          for (Expr e : randomSuite(h.names())) {
            try (HostColumn want = Evaluate.evaluate(exec, h, e); DeviceColumn got = Evaluate.evaluate(g, d, e)) {
              // a layout the values do not show (bytes past the last offset) breaks a later concatenation
              assertNull(DeviceLayout.problem(g, got), e + " " + nulls);
              got.retain();
              try (DeviceTable one = new DeviceTable(gpu, List.of("x"), List.of(got), rows);
                  VectorSchemaRoot back = one.toArrow(allocator, g.stream());
                  VectorSchemaRoot expected = new VectorSchemaRoot(List.of(want.vector()))) {
                expected.setRowCount(rows);
                assertTrue(back.getVector(0).getValueCount() == rows);
                for (int i = 0; i < rows; i++) {
                  assertEquals(want.vector().getObject(i), back.getVector(0).getObject(i), e + " row " + i);
                }
              }
            }
          }
        }
      }
      assertTrue(GeneratedKernels.on(gpu.device()).size() >= generated, "generated kernels compiled");
    }
  }

  /** Expressions that fail on some row of the random all-types table (1000 rows, a null every 3): user errors. */
  static List<Expr> failingSuite(List<String> names) {
    int i16 = names.indexOf("i16");
    int i64 = names.indexOf("i64");
    int f64 = names.indexOf("f64");
    int dec = names.indexOf("dec18");
    return List.of(
        call(Op.MUL, col(i64), col(i64)),
        call(Op.ADD, col(i64), col(i64)),
        call(Op.SUB, col(i64), call(Op.NEG, col(i64))),
        call(Op.NEG, col(i64)),
        call(Op.ABS, col(i64)),
        call(Op.MUL, col(i16), col(i16)),
        call(Op.DIV, col(f64), call(Op.SUB, col(f64), col(f64))),
        Expr.cast(col(i64), DataType.INT32),
        Expr.cast(col(dec), DataType.decimal(10, 2)),
        Expr.cast(col(dec), DataType.decimal(18, 16)),
        // past 38 digits (a DECIMAL(38, 10) value is about 2^119)
        call(Op.MUL, col(names.indexOf("dec38")), col(names.indexOf("dec38"))),
        Expr.caseWhen(List.of(call(Op.GT, col(i64), lit(0L)), call(Op.MUL, col(i64), lit(4L))), lit(0L)));
  }

  @Test
  void cpuFailsOnTheFailingSuite() {
    try (VectorSchemaRoot r = TestTables.allTypes(allocator, 1000, Nulls.every(3), 1000); HostTable h = HostTable.fromArrow(r)) {
      for (Expr e : failingSuite(h.names())) {
        GpudfException ex = assertThrows(GpudfException.class, () -> Evaluate.evaluate(exec, h, e).close(), e.toString());
        assertTrue(ex.getMessage().contains("row"), ex.getMessage());
      }
    }
  }

  /** The interpreter and the generated kernels report the CPU twin's first failing row, word for word. */
  @RequiresGpu
  @Test
  void gpuErrorsMatchTheCpuTwin() {
    try (Gpu gpu = Gpu.open(0, 2L << 30, 256L << 20); Exec g = Exec.onGpu(gpu, allocator);
        VectorSchemaRoot r = TestTables.allTypes(allocator, 1000, Nulls.every(3), 1000); HostTable h = HostTable.fromArrow(r);
        DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
      for (Expr e : failingSuite(h.names())) {
        String want = assertThrows(GpudfException.class, () -> Evaluate.evaluate(exec, h, e).close()).getMessage();
        for (int from : new int[] {Integer.MAX_VALUE, 0}) {
          withGeneratedFrom(from, () -> assertEquals(want,
              assertThrows(GpudfException.class, () -> Evaluate.evaluate(g, d, e).close()).getMessage(), e + " from " + from));
        }
      }
    }
  }
}
