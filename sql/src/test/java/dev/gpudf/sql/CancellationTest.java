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
 * A cancelled query, and one past its time limit, stop at their next check with a typed error
 * and leave nothing behind (the allocator closes clean); the session answers the next query. A
 * cancel that arrives at any of a TPC-H query's checks (before operators, and inside them at
 * allocations and the CPU twins' loops, which every query reaches) stops it the same way.
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

  @Test
  void aCancelAtAnyCheckOfEveryTpchQueryStopsItOnTheCpu() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      cancelEverywhere(s, a, null);
    }
  }

  @dev.gpudf.columnar.testing.RequiresGpu
  @Test
  void aCancelAtAnyCheckOfEveryTpchQueryStopsItOnTheGpu() {
    try (RootAllocator a = new RootAllocator(); dev.gpudf.columnar.cuda.Gpu gpu = dev.gpudf.columnar.cuda.Gpu.open(0, 2L << 30, 64L << 20);
        GpuSession s = GpuSession.gpu(gpu, a)) {
      cancelEverywhere(s, a, gpu);
    }
  }

  /**
   * For each TPC-H query (scale 0.01): the number of checks an uncancelled run makes, then runs
   * cancelled at up to {@link #CANCELS_PER_QUERY} of them spread from the first to the last; each
   * must end in {@link QueryCancelledException} with the session's memory (and device buffers) as
   * before, and the next uncancelled run answers as the first.
   */
  private static void cancelEverywhere(GpuSession s, RootAllocator a, dev.gpudf.columnar.cuda.Gpu gpu) {
    for (io.trino.tpch.TpchTable<?> t : io.trino.tpch.TpchTable.getTables()) {
      try (VectorSchemaRoot r = TpchTables.arrow(a, t, 0.01)) {
        s.catalog().register(t.getTableName(), r);
      }
    }
    long runs = 0;
    long inside = 0;
    for (java.util.Map.Entry<String, String> q : TpchTables.queries().entrySet()) {
      List<Object[]> want;
      try (VectorSchemaRoot r = s.query(q.getValue())) {
        want = TpchAnswers.rows(r);
      }
      // counted on the second run: the first may load the tables onto the device
      java.util.concurrent.atomic.AtomicLong checks = new java.util.concurrent.atomic.AtomicLong();
      s.query(q.getValue(), List.of(), t -> { }, Cancellation.following(() -> checks.incrementAndGet() < 0, 0)).close();
      long held = a.getAllocatedMemory();
      int buffers = gpu == null ? 0 : gpu.pool().stats().liveBuffers();
      long n = checks.get();
      // one check before each operator of the plan (one line of EXPLAIN each); the rest are the
      // checks inside operators, at allocations and in the CPU twins' loops
      long operators = s.explain(q.getValue()).lines().filter(l -> !l.isBlank()).count();
      assertTrue(n > operators, q.getKey() + " made " + n + " checks for " + operators + " operators: none inside them");
      System.out.printf("CANCEL %s %s: %d checks, %d operators%n", gpu == null ? "cpu" : "gpu", q.getKey(), n, operators);
      java.util.Set<Long> at = new java.util.TreeSet<>();
      for (int i = 0; i < CANCELS_PER_QUERY; i++) {
        at.add(1 + (n - 1) * i / (CANCELS_PER_QUERY - 1));
      }
      for (long k : at) {
        java.util.concurrent.atomic.AtomicLong left = new java.util.concurrent.atomic.AtomicLong(k);
        assertThrows(QueryCancelledException.class, () -> s.query(q.getValue(), List.of(), t -> { },
            Cancellation.following(() -> left.decrementAndGet() <= 0, 0)).close(), q.getKey() + " cancelled at check " + k);
        assertEquals(held, a.getAllocatedMemory(), q.getKey() + ": host memory left after a cancel at check " + k);
        if (gpu != null) {
          assertEquals(buffers, gpu.pool().stats().liveBuffers(), q.getKey() + ": device buffers left after a cancel at check " + k);
        }
        runs++;
      }
      try (VectorSchemaRoot r = s.query(q.getValue())) {
        org.junit.jupiter.api.Assertions.assertNull(TpchAnswers.difference(want, TpchAnswers.rows(r)), q.getKey());
      }
      inside += n;
    }
    System.out.printf("CANCEL %s: %d cancelled runs over 22 TPC-H queries, %d checks in their uncancelled runs%n",
        gpu == null ? "cpu" : "gpu", runs, inside);
  }

  private static final int CANCELS_PER_QUERY = 12;
}
