package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

  /**
   * The statements whose plan decorrelates a sub-query ({@link PlannerWarmUp#decorrelatorSoon}
   * starts Calcite's rules for those) are found, and those without one are not (starting the rules
   * for them would take a core from the statement for nothing).
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
      "select a from t where a > (select max(b) from u)|true",
      "select (select 1) as x from t|true",
      "select a from t where exists (select 1 from u where u.b = t.a)|true",
      "select a from t where a not in (select b from u)|true",
      "select a, count(*) from t group by a having count(*) > (select count(*) from u)|true",
      "select x.a from (select a from t where a in (select b from u)) x|true",
      "select a from t union all select b from u where b = any (select c from v)|true",
      "select a from t|false",
      "select x.a from (select a from t) x join u on x.a = u.b|false",
      "select a from t where a in (1, 2, 3) and a between 0 and 9|false",
      "select a from t union select b from u order by 1|false",
      "with w as (select a from t) select a from w|false"})
  void subQueriesInExpressionsAreFound(String sql, boolean expected) throws Exception {
    org.apache.calcite.sql.SqlNode parsed = org.apache.calcite.sql.parser.SqlParser.create(sql).parseQuery();
    assertEquals(expected, PlannerWarmUp.hasExpressionSubQuery(parsed), sql);
  }
}
