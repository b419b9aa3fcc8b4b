package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** The warm-up's query plans (a planner change that refused it would leave every process cold, silently). */
class PlannerWarmUpTest {
  @Test
  void theWarmUpQueryPlansWithTheOperatorsItIsThereToLoad() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      String plan = s.explain(PlannerWarmUp.QUERY);
      for (String operator : new String[] {"GpuJoin", "GpuAggregate", "GpuSort", "GpuValues", "GpuProject"}) {
        assertTrue(plan.contains(operator), operator + " in\n" + plan);
      }
    }
  }
}
