package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.QueryCancelledException;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * A cancelled query, and one past its time limit, stop at their next operator with a typed error
 * and leave nothing behind (the allocator closes clean); the session answers the next query.
 */
class CancellationTest {
  private static final String QUERY = "SELECT g, COUNT(*) FROM (SELECT MOD(x, 7) AS g FROM t WHERE x > 1) GROUP BY g ORDER BY g";

  @Test
  void cancelledAndTimedOutQueriesStopAndTheSessionGoesOn() throws Exception {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      s.update("CREATE TABLE t (x INTEGER)");
      s.update("INSERT INTO t VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)");
      Cancellation cancelled = Cancellation.start();
      cancelled.cancel();
      QueryCancelledException c = assertThrows(QueryCancelledException.class,
          () -> s.query(QUERY, List.of(), t -> { }, cancelled));
      assertFalse(c.timedOut());
      assertEquals("the query was cancelled", c.getMessage());
      Cancellation limited = Cancellation.withLimit(1);
      Thread.sleep(1_100);
      QueryCancelledException late = assertThrows(QueryCancelledException.class,
          () -> s.query(QUERY, List.of(), t -> { }, limited));
      assertTrue(late.timedOut());
      assertTrue(late.getMessage().contains("time limit of 1 s"), late.getMessage());
      try (VectorSchemaRoot r = s.query(QUERY, List.of(), t -> { }, Cancellation.withLimit(60))) {
        assertEquals(7, r.getRowCount());
      }
      assertThrows(IllegalArgumentException.class, () -> Cancellation.withLimit(-1));
    }
  }
}
