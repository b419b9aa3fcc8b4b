package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.kernels.Exec;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** Distinct counts for join ordering: measured once per table version, and never a failed query. */
class ColumnStatsTest {
  @Test
  void aDeviceTooFullToMeasureGivesNoCountAndTheNextPlanMeasuresAgain() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      session.update("CREATE TABLE t (k INTEGER)");
      session.update("INSERT INTO t VALUES (1), (2), (2), (3)");
      AtomicInteger contexts = new AtomicInteger();
      ColumnStats stats = new ColumnStats(session.catalog(), () -> {
        if (contexts.incrementAndGet() == 1) {
          throw new GpuOutOfMemoryException(1 << 20, 0, 1 << 10, "test");
        }
        return new QueryContext(Exec.onCpu(allocator), session.catalog(), List.of());
      }, table -> null);
      assertEquals(OptionalDouble.empty(), stats.distinct("t", 0));
      assertEquals(OptionalDouble.of(3), stats.distinct("t", 0));
      // measured once, then kept until the table changes
      assertEquals(OptionalDouble.of(3), stats.distinct("t", 0));
      assertEquals(2, contexts.get());
      session.update("INSERT INTO t VALUES (4)");
      assertEquals(OptionalDouble.of(4), stats.distinct("t", 0));
      assertEquals(3, contexts.get(), "a changed table is measured again");
    }
  }
}
