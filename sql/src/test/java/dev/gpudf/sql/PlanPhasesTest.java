package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** A query's timings say where its plan's time went when it was planned, and nothing when the plan came from the cache. */
class PlanPhasesTest {
  private static final String SQL = """
      SELECT l_returnflag, SUM(l_quantity) AS q FROM lineitem
      WHERE l_quantity < (SELECT AVG(l_quantity) FROM lineitem) GROUP BY l_returnflag ORDER BY 1""";

  @Test
  void aPlannedQueryGivesItsPhasesAndACachedPlanNone() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      TpchTables.loadAll(s.catalog(), 0.001, a);
      List<GpuSession.QueryTimings> runs = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        try (VectorSchemaRoot r = s.query(SQL, List.of(), runs::add)) {
          assertEquals(3, r.getRowCount());
        }
      }
      GpuSession.QueryTimings first = runs.get(0);
      GpuSession.PlanPhases p = first.planPhases();
      assertNotNull(p, "the first run planned");
      long[] phases = {p.parseNanos(), p.validateNanos(), p.convertNanos(), p.rewriteNanos(), p.physicalNanos()};
      long sum = 0;
      for (long n : phases) {
        assertTrue(n > 0, "every phase took time: " + p.text());
        sum += n;
      }
      assertTrue(sum <= first.planNanos(), p.text() + " within the plan's " + first.planNanos() + " ns");
      assertTrue(p.text().matches("parse [0-9.]+ \\+ validate [0-9.]+ \\+ convert [0-9.]+ \\+ rewrite [0-9.]+ \\+ physical [0-9.]+"),
          p.text());
      assertNull(runs.get(1).planPhases(), "the second run's plan came from the cache");
    }
  }
}
