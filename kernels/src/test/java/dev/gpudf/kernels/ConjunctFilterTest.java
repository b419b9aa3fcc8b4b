package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A conjunction evaluated conjunct by conjunct keeps exactly the rows, and raises exactly the
 * errors, of the whole condition evaluated as a mask: with NULL conjuncts, with a conjunct that
 * fails on rows an earlier or a later conjunct rules out, on rows in play, and across batch and
 * chunk edges.
 */
class ConjunctFilterTest {
  private record Condition(String name, Expr expr, boolean conjunctPath) {}

  private static List<Condition> conditions(HostTable t) {
    Expr i8 = Expr.col(t.names().indexOf("i8"));
    Expr i32 = Expr.col(t.names().indexOf("i32"));
    Expr i64 = Expr.col(t.names().indexOf("i64"));
    Expr f64 = Expr.col(t.names().indexOf("f64"));
    Expr str = Expr.col(t.names().indexOf("str"));
    Expr bool = Expr.col(t.names().indexOf("bool"));
    Expr dec = Expr.col(t.names().indexOf("dec18"));
    Expr date = Expr.col(t.names().indexOf("date"));
    Expr small = Expr.call(Op.BETWEEN, i64, Expr.lit(-1000L), Expr.lit(1000L));
    // fails (overflow) where |i64| is large: most random rows
    Expr overflows = Expr.call(Op.GT, Expr.call(Op.MUL, i64, Expr.lit(3L)), Expr.lit(0L));
    return List.of(
        new Condition("two comparisons", Expr.call(Op.AND, Expr.call(Op.GT, i32, Expr.lit(0)), Expr.call(Op.LT, i8, Expr.lit(10))),
            true),
        new Condition("q6's shape", Expr.call(Op.AND, Expr.call(Op.AND, Expr.call(Op.AND,
            Expr.call(Op.GE, date, Expr.lit(0)), Expr.call(Op.LT, date, Expr.lit(1_000_000))),
            Expr.call(Op.BETWEEN, dec, Expr.lit(new BigDecimal("-1000.5")), Expr.lit(new BigDecimal("10000000000000.00")))),
            Expr.call(Op.LT, i8, Expr.lit(24))), true),
        new Condition("strings, LIKE and a BOOL column", Expr.call(Op.AND, Expr.call(Op.AND,
            Expr.call(Op.GE, str, new Expr.Lit(DataType.STRING, "a")), Expr.call(Op.LIKE, str, new Expr.Lit(DataType.STRING, "%a%"))),
            bool), true),
        new Condition("an OR inside a conjunct", Expr.call(Op.AND, Expr.call(Op.OR, Expr.call(Op.IS_NULL, i32),
            Expr.call(Op.GT, f64, Expr.lit(0.0))), Expr.call(Op.NE, i8, Expr.lit(0))), true),
        new Condition("NULL conjunct first", Expr.call(Op.AND, Expr.call(Op.GT, i32, Expr.nullOf(DataType.INT32)),
            Expr.call(Op.GT, i8, Expr.lit(0))), true),
        new Condition("ruled out before a failing conjunct", Expr.call(Op.AND, small, overflows), true),
        new Condition("a failing conjunct ruled out after", Expr.call(Op.AND, overflows, small), false),
        new Condition("a failing conjunct on rows in play", Expr.call(Op.AND, Expr.call(Op.IS_NOT_NULL, i64), overflows), false),
        new Condition("a failing conjunct after a NULL one", Expr.call(Op.AND, Expr.call(Op.GT, i32, Expr.nullOf(DataType.INT32)),
            overflows), false),
        // the string conjunct goes after the failing one, which then fails on rows the string rules out
        new Condition("a string conjunct before a failing one", Expr.call(Op.AND,
            Expr.call(Op.EQ, str, new Expr.Lit(DataType.STRING, "naïve café")), Expr.call(Op.IS_NOT_NULL, i32), overflows), false),
        new Condition("one comparison", Expr.call(Op.GT, i32, Expr.lit(0)), true));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1023, 1025, 16_385, 70_000})
  void keepsTheRowsAndErrorsOfTheWholeCondition(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows); HostTable t = HostTable.fromArrow(r)) {
          int i32 = t.names().indexOf("i32");
          for (Condition c : conditions(t)) {
            String where = c.name() + ", " + rows + " rows, nulls " + nulls;
            int[] want;
            try (HostColumn mask = Evaluate.evaluate(exec, t, c.expr())) {
              want = Filter.keptRows(mask);
            } catch (RuntimeException e) {
              RuntimeException got = assertThrows(RuntimeException.class, () -> Filter.filter(exec, t, c.expr(), t).close(), where);
              assertEquals(e.getClass(), got.getClass(), where);
              assertEquals(e.getMessage(), got.getMessage(), where);
              continue;
            }
            int[] conjunctRows = ConjunctFilter.keptRows(exec, t, c.expr());
            if (c.conjunctPath()) {
              assertNotNull(conjunctRows, where + ": the conjunct path serves");
            }
            if (conjunctRows != null) {
              assertArrayEquals(want, conjunctRows, where);
            }
            try (HostTable out = Filter.filter(exec, t, c.expr(), t)) {
              assertEquals(want.length, out.rowCount(), where);
              for (int k = 0; k < want.length; k++) {
                assertEquals(r.getVector(i32).getObject(want[k]), out.column(i32).vector().getObject(k), where + ", row " + k);
              }
            }
          }
        }
        assertEquals(0, a.getAllocatedMemory());
      }
    }
  }

  /**
   * On the GPU a filter's selection ({@link Filter#select(Exec, DeviceTable, Expr)}) counts its
   * rows before the condition's one wait: it keeps the rows, and raises the errors, of the CPU's
   * mask, through the interpreter and, with every program generated, through generated kernels and
   * string matches (where the count waits on its own).
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1025, 70_000})
  void aGpuSelectionKeepsTheRowsAndErrorsOfTheCpuMask(int rows) {
    for (int generatedFrom : new int[] {Integer.MAX_VALUE, 0}) {
      int before = Evaluate.setGeneratedMinRows(generatedFrom);
      try (RootAllocator a = new RootAllocator(); Exec cpu = Exec.onCpu(a); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20);
          Exec g = Exec.onGpu(gpu, a)) {
        for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
          try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows); HostTable t = HostTable.fromArrow(r);
              DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
            int i32 = t.names().indexOf("i32");
            for (Condition c : conditions(t)) {
              String where = c.name() + ", " + rows + " rows, nulls " + nulls + ", generated from " + generatedFrom;
              int[] want;
              try (HostColumn mask = Evaluate.evaluate(cpu, t, c.expr())) {
                want = Filter.keptRows(mask);
              } catch (RuntimeException e) {
                RuntimeException got = assertThrows(RuntimeException.class, () -> Filter.select(g, d, c.expr()).close(), where);
                assertEquals(e.getClass(), got.getClass(), where);
                assertEquals(e.getMessage(), got.getMessage(), where);
                continue;
              }
              try (Filter.Selection kept = Filter.select(g, d, c.expr());
                  DeviceTable out = (DeviceTable) Filter.filter(g, d, kept);
                  DeviceTable viaOps = (DeviceTable) TableOps.filter(g, d, c.expr(), d);
                  VectorSchemaRoot got = out.toArrow(a, g.stream()); VectorSchemaRoot got2 = viaOps.toArrow(a, g.stream())) {
                assertEquals(want.length, kept.count(), where);
                assertEquals(want.length, got.getRowCount(), where);
                assertEquals(want.length, got2.getRowCount(), where);
                for (int k = 0; k < want.length; k++) {
                  Object v = r.getVector(i32).getObject(want[k]);
                  assertEquals(v, got.getVector(i32).getObject(k), where + ", row " + k);
                  assertEquals(v, got2.getVector(i32).getObject(k), where + ", row " + k);
                }
              }
            }
          }
        }
      } finally {
        Evaluate.setGeneratedMinRows(before);
      }
    }
  }
}
