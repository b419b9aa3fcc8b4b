package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The batched CPU evaluator equals the row-at-a-time one on every program of the expression suites it runs. */
class CpuBatchEvalTest {
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 1023, 1024, 1025, 20_000})
  void batchedEqualsRowAtATime(int rows) {
    int compared = 0;
    int strings = 0;
    try (RootAllocator a = new RootAllocator()) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows + 11L); HostTable t = HostTable.fromArrow(r)) {
          List<Expr> all = new ArrayList<>(EvaluateTest.randomSuite(t.names()));
          all.addAll(EvaluateTest.failingSuite(t.names()));
          // string results: addresses into the column or the constants, with lengths
          int str = t.names().indexOf("str");
          all.add(Expr.caseWhen(List.of(Expr.col(t.names().indexOf("bool")), Expr.col(str)), new Expr.Lit(DataType.STRING, "x")));
          all.add(Expr.call(Op.COALESCE, Expr.col(str), new Expr.Lit(DataType.STRING, "none")));
          all.add(Expr.call(Op.GE, Expr.col(str), new Expr.Lit(DataType.STRING, "naïve")));
          // equality's own loop: equal strings, others of the same length, of other lengths, the empty one
          for (String k : List.of("naïve café", "naïve cafe", "a", "", "Zürich")) {
            all.add(Expr.call(Op.EQ, Expr.col(str), new Expr.Lit(DataType.STRING, k)));
            all.add(Expr.call(Op.NE, new Expr.Lit(DataType.STRING, k), Expr.col(str)));
          }
          for (Expr e : all) {
            if (StringBuild.anywhere(e, t.types())) {
              continue;
            }
            Program p = ExprCompiler.compile(e, t.types());
            if (!CpuBatchEval.supports(p)) {
              continue;
            }
            List<HostColumn> slots = p.columns().stream().map(t::column).toList();
            try (ArrowBuf pool = a.buffer(Math.max(1, p.strings().length))) {
              pool.setBytes(0, p.strings());
              CpuEval.Rows want = CpuEval.run(p, slots, rows, pool.memoryAddress(), false);
              CpuEval.Rows got = CpuEval.run(p, slots, rows, pool.memoryAddress(), true);
              assertEquals(want.firstError(), got.firstError(), e + " first error");
              assertArrayEquals(want.nulls(), got.nulls(), e + " nulls");
              // a string result is an address and a length
              assertArrayEquals(want.values(), got.values(), e + " values");
              if (p.result().id() == TypeId.STRING) {
                for (int i = 0; i < rows; i++) {
                  assertEquals(want.nulls()[i] ? 0 : want.lengths()[i], got.nulls()[i] ? 0 : got.lengths()[i], e + " length " + i);
                }
                strings++;
              }
            }
            compared++;
          }
        }
      }
    }
    assertTrue(compared >= 60, compared + " programs compared");
    assertTrue(strings > 0, "no program with a string result was compared");
  }
}
