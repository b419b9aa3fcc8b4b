package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** Join order from measured statistics: a small table's filter is counted, not guessed. */
class JoinOrderTest {
  private static String rows(int n, java.util.function.IntFunction<String> row) {
    return IntStream.range(0, n).mapToObj(row).collect(Collectors.joining(", "));
  }

  /**
   * A range that keeps 2 of d1's 100 rows against a point filter that keeps 10 of d2's: counted,
   * d1's join keeps fewer fact rows and runs first; guessed (a quarter or more of d1), d2's would.
   */
  @Test
  void aCountedRangeFilterJoinsBeforeAGuessedOne() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      session.update("CREATE TABLE f (a INTEGER, b INTEGER)");
      session.update("INSERT INTO f VALUES " + rows(1000, i -> "(" + i % 100 + ", " + i % 100 + ")"));
      session.update("CREATE TABLE d1 (k INTEGER, v INTEGER)");
      session.update("INSERT INTO d1 VALUES " + rows(100, i -> "(" + i + ", " + i + ")"));
      session.update("CREATE TABLE d2 (k INTEGER, c INTEGER)");
      session.update("INSERT INTO d2 VALUES " + rows(100, i -> "(" + i + ", " + i % 10 + ")"));
      String sql = "SELECT count(*) FROM f, d1, d2 WHERE f.a = d1.k AND f.b = d2.k AND d1.v BETWEEN 10 AND 11"
          + " AND d2.c = 0";
      String plan = session.explain(sql);
      int d1 = plan.indexOf("[[d1");
      int d2 = plan.indexOf("[[d2");
      assertTrue(d1 >= 0 && d2 >= 0, plan);
      // the deepest join is printed first: d1's scan comes before d2's
      assertTrue(d1 < d2, plan);
      // f's rows with a = b in {10, 11}, of which d2 keeps b = 10
      try (org.apache.arrow.vector.VectorSchemaRoot result = session.query(sql)) {
        assertEquals(10L, ((Number) result.getVector(0).getObject(0)).longValue());
      }
    }
  }
}
