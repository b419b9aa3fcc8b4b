package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The batched CPU evaluator equals the row-at-a-time one on every arithmetic-only program of the expression suites. */
class CpuBatchEvalTest {
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 1023, 1024, 1025, 20_000})
  void batchedEqualsRowAtATime(int rows) {
    int compared = 0;
    try (RootAllocator a = new RootAllocator()) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows + 11L); HostTable t = HostTable.fromArrow(r)) {
          List<Expr> all = new ArrayList<>(EvaluateTest.randomSuite(t.names()));
          all.addAll(EvaluateTest.failingSuite(t.names()));
          for (Expr e : all) {
            if (StringBuild.anywhere(e, t.types())) {
              continue;
            }
            Program p = ExprCompiler.compile(e, t.types());
            if (!p.arithmeticOnly()) {
              continue;
            }
            List<HostColumn> slots = p.columns().stream().map(t::column).toList();
            CpuEval.Rows want = CpuEval.run(p, slots, rows, 0, false);
            CpuEval.Rows got = CpuEval.run(p, slots, rows, 0, true);
            assertEquals(want.firstError(), got.firstError(), e + " first error");
            assertArrayEquals(want.nulls(), got.nulls(), e + " nulls");
            assertArrayEquals(want.values(), got.values(), e + " values");
            compared++;
          }
        }
      }
    }
    assertTrue(compared >= 60, compared + " programs compared");
  }
}
