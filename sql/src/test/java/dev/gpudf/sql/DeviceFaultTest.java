package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gpudf.columnar.cuda.DeviceMemoryPool;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.columnar.testing.HeavyGpu;
import io.trino.tpch.TpchTable;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Device faults: for each of the 22 TPC-H queries (scale 0.01) on a GPU session, an out-of-memory
 * injected at the k-th device allocation of the query, for every k up to the number of
 * allocations the query makes, either fails the query with a {@link GpuOutOfMemoryException}
 * or (after the session's spill-and-retry) gives the same answer as the run without a fault;
 * after each run, with the catalog's columns spilled, no device buffer is left and the host
 * allocator holds what it held before. Prints one line per query; in the {@code gpu-heavy} suite.
 */
class DeviceFaultTest {
  private static final double SCALE = 0.01;
  /** Wall seconds per query before the remaining k are sampled evenly instead of tried one by one. */
  private static final double SECONDS_PER_QUERY = Double.parseDouble(System.getProperty("gpudf.faults.secondsPerQuery", "15"));

  @HeavyGpu
  @Test
  void anOutOfMemoryAtEveryAllocationOfEveryTpchQueryIsTypedAndLeaksNothing() {
    long triedAll = 0;
    long tried = 0;
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0, 4L << 30, 256L << 20);
        GpuSession s = GpuSession.gpu(gpu, allocator)) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        try (VectorSchemaRoot r = TpchTables.arrow(allocator, t, SCALE)) {
          s.catalog().register(t.getTableName(), r);
        }
      }
      DeviceMemoryPool pool = gpu.pool();
      for (Map.Entry<String, String> q : TpchTables.queries().entrySet()) {
        List<Object[]> want = rows(s, q.getValue());
        s.catalog().spillIdle();
        int idleBuffers = pool.stats().liveBuffers();
        long idleHost = allocator.getAllocatedMemory();
        long before = pool.stats().allocationCount();
        assertNull(TpchAnswers.difference(want, rows(s, q.getValue())), q.getKey() + " twice");
        long allocations = pool.stats().allocationCount() - before;
        s.catalog().spillIdle();
        long started = System.nanoTime();
        int typed = 0;
        int answered = 0;
        long step = 1;
        int runs = 0;
        for (long k = 1; k <= allocations; k += step) {
          if (step == 1 && System.nanoTime() - started > SECONDS_PER_QUERY * 1e9) {
            // out of time for this query: the rest evenly, about as many again
            step = Math.max(1, (allocations - k) / Math.max(1, runs));
          }
          runs++;
          pool.failAllocation(k);
          try {
            List<Object[]> got = rows(s, q.getValue());
            assertNull(TpchAnswers.difference(want, got), q.getKey() + " with an out-of-memory at allocation " + k);
            answered++;
          } catch (GpuOutOfMemoryException e) {
            typed++;
          } catch (RuntimeException e) {
            fail(q.getKey() + ": an out-of-memory at allocation " + k + " gave an untyped " + e, e);
          } finally {
            pool.failAllocation(0);
          }
          s.catalog().spillIdle();
          assertEquals(idleBuffers, pool.stats().liveBuffers(), q.getKey() + ": device buffers left after a fault at allocation " + k);
          assertEquals(idleHost, allocator.getAllocatedMemory(), q.getKey() + ": host memory left after a fault at allocation " + k);
        }
        tried += runs;
        triedAll += step == 1 ? 1 : 0;
        System.out.printf("FAULTS %s: %d allocations, %d faults injected (%s): %d typed errors, %d right answers, no leak%n",
            q.getKey(), allocations, runs, step == 1 ? "every k" : "every k for " + SECONDS_PER_QUERY + " s, then every " + step + "th",
            typed, answered);
      }
    }
    System.out.printf("FAULTS total: %d injected runs over 22 queries, %d of them tried at every allocation%n", tried, triedAll);
  }

  private static List<Object[]> rows(GpuSession s, String sql) {
    try (VectorSchemaRoot got = s.query(sql)) {
      return TpchAnswers.rows(got);
    }
  }
}
