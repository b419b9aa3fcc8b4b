package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * The query's checkpoint inside the CPU twins' long loops ({@link Exec#checkpoints}): a sort runs
 * it before each merge pass, a group-by once per hash partition (the join's probe chunks are in
 * {@code JoinTest}); a checkpoint that throws stops the operator there, with nothing left
 * allocated (the allocator closes clean).
 */
class CheckpointTest {
  private static final int ROWS = 10_000;

  @Test
  void aSortChecksBeforeEachMergePassAndStopsWhereACheckThrows() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot r = TestTables.allTypes(a, ROWS, Nulls.every(7), 3); HostTable t = HostTable.fromArrow(r)) {
      List<SortKey> keys = List.of(SortKey.asc(t.names().indexOf("i8")), SortKey.desc(t.names().indexOf("str")));
      AtomicInteger checks = new AtomicInteger();
      exec.checkpoints(checks::incrementAndGet);
      try (HostColumn perm = Sort.argsort(exec, t, keys)) {
        assertEquals(ROWS, perm.rowCount());
      }
      // runs of 32 rows, merged in passes of width 32, 64, ... 8,192
      assertEquals(9, checks.get(), "one checkpoint a merge pass");
      stopsAt(exec, 3, () -> Sort.argsort(exec, t, keys).close());
    }
  }

  @Test
  void aGroupByChecksOncePerPartitionAndAggregateAndStopsWhereACheckThrows() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot r = TestTables.allTypes(a, ROWS, Nulls.every(5), 4); HostTable t = HostTable.fromArrow(r)) {
      int[] keys = {t.names().indexOf("str")};
      List<GroupBy.Agg> aggs = List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0));
      List<String> names = List.of("k", "n");
      AtomicInteger checks = new AtomicInteger();
      exec.checkpoints(checks::incrementAndGet);
      try (HostTable g = GroupBy.aggregate(exec, t, keys, aggs, names)) {
        assertTrue(g.rowCount() > 1, "groups: " + g.rowCount());
      }
      assertEquals(64 + aggs.size(), checks.get(), "one checkpoint a hash partition and one an aggregate");
      stopsAt(exec, 10, () -> GroupBy.aggregate(exec, t, keys, aggs, names).close());
    }
  }

  /**
   * A body that throws on a worker comes back to the caller only after every item that began has
   * ended, and the items not begun are skipped: the caller may free what the workers read.
   */
  @Test
  void aBodyThatThrowsReturnsOnlyAfterTheRunningItemsEnded() {
    AtomicInteger running = new AtomicInteger();
    AtomicInteger begun = new AtomicInteger();
    int n = 10_000;
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> Exec.parallelChecked(() -> { }, n, i -> {
      begun.incrementAndGet();
      running.incrementAndGet();
      try {
        if (i == 3) {
          throw new IllegalStateException("item 3");
        }
        java.util.concurrent.locks.LockSupport.parkNanos(200_000);
      } finally {
        running.decrementAndGet();
      }
    }));
    assertEquals("item 3", e.getMessage());
    assertEquals(0, running.get(), "no item still running when the caller got the exception");
    assertTrue(begun.get() < n, "items after the failure were skipped: " + begun.get());
  }

  /** {@code op} with a checkpoint that throws at its {@code k}-th call fails with that exception. */
  private static void stopsAt(Exec exec, int k, Runnable op) {
    AtomicInteger calls = new AtomicInteger();
    exec.checkpoints(() -> {
      if (calls.incrementAndGet() == k) {
        throw new IllegalStateException("stopped at check " + k);
      }
    });
    // a worker thread's exception comes back through the fork-join pool, maybe wrapped in one of its type
    String message = assertThrows(IllegalStateException.class, op::run).getMessage();
    assertTrue(message.contains("stopped at check " + k), message);
  }
}
