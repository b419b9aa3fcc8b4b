package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.QueryMemoryLimitException;
import dev.gpudf.columnar.testing.RequiresGpu;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * A query's own memory limits: a query that needs more than its limit fails with a typed error
 * naming the limit and the setting, holds nothing afterwards, and the next query (within its
 * limit, or after the limit is raised) answers; a query's result outlives its own allocator.
 */
class MemoryLimitsTest {
  private static final int ROWS = 200_000;
  // a sort of 200,000 BIGINTs holds at least its 1.6 MB of output; its input is the table's, not the query's
  private static final String BIG = "SELECT x, x * 2 AS y FROM t ORDER BY x DESC";
  private static final String SMALL = "SELECT COUNT(*), SUM(x) FROM t WHERE x < 10";

  @Test
  void aQueryPastItsHostLimitFailsTypedAndTheSessionGoesOn() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      load(s, a);
      long tables = a.getAllocatedMemory();
      s.limitQueryMemory(new MemoryLimits(0, 1 << 20));
      QueryMemoryLimitException e = assertThrows(QueryMemoryLimitException.class, () -> s.query(BIG).close());
      assertEquals(QueryMemoryLimitException.Kind.HOST, e.kind());
      assertTrue(e.getMessage().contains("host memory than its limit of 1,048,576 bytes")
          && e.getMessage().contains(MemoryLimits.HOST_SETTING) && e.getMessage().contains("it held up to"), e.getMessage());
      assertEquals(tables, a.getAllocatedMemory(), "the failed query left nothing behind");
      checkSmall(s);
      s.limitQueryMemory(new MemoryLimits(0, 64L << 20));
      checkBig(s);
      assertEquals(tables, a.getAllocatedMemory());
    }
  }

  @RequiresGpu
  @Test
  void aQueryPastItsDeviceLimitFailsTypedAndTheSessionGoesOn() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20);
        GpuSession s = GpuSession.gpu(gpu, a)) {
      load(s, a);
      int buffers = gpu.pool().stats().liveBuffers();
      s.limitQueryMemory(new MemoryLimits(1 << 20, 0));
      QueryMemoryLimitException e = assertThrows(QueryMemoryLimitException.class, () -> s.query(BIG).close());
      assertEquals(QueryMemoryLimitException.Kind.DEVICE, e.kind());
      assertTrue(e.getMessage().contains("device memory than its limit of 1,048,576 bytes")
          && e.getMessage().contains(MemoryLimits.DEVICE_SETTING), e.getMessage());
      assertEquals(buffers, gpu.pool().stats().liveBuffers(), "the failed query left no device buffer");
      // results kept on the device are bounded the same way
      assertEquals(QueryMemoryLimitException.Kind.DEVICE,
          assertThrows(QueryMemoryLimitException.class, () -> s.sql(BIG).collect().close()).kind());
      assertEquals(QueryMemoryLimitException.Kind.DEVICE,
          assertThrows(QueryMemoryLimitException.class, () -> s.queryOnDevice(BIG).close()).kind());
      assertEquals(buffers, gpu.pool().stats().liveBuffers(), "the failed device results left no buffer");
      checkSmall(s);
      s.limitQueryMemory(new MemoryLimits(256L << 20, 0));
      checkBig(s);
      try (var d = s.queryOnDevice(BIG)) {
        assertEquals(ROWS, d.rowCount());
      }
      assertEquals(buffers, gpu.pool().stats().liveBuffers());
    }
  }

  @Test
  void limitsAreNotNegative() {
    assertThrows(IllegalArgumentException.class, () -> new MemoryLimits(-1, 0));
    assertThrows(IllegalArgumentException.class, () -> new MemoryLimits(0, -1));
  }

  private static void load(GpuSession s, RootAllocator a) {
    try (BigIntVector x = new BigIntVector("x", a)) {
      x.allocateNew(ROWS);
      for (int i = 0; i < ROWS; i++) {
        x.set(i, i);
      }
      x.setValueCount(ROWS);
      try (VectorSchemaRoot r = VectorSchemaRoot.of(x)) {
        s.catalog().register("t", r);
      }
    }
  }

  private static void checkSmall(GpuSession s) {
    try (VectorSchemaRoot r = s.query(SMALL)) {
      assertEquals(1, r.getRowCount());
      assertEquals("10", r.getVector(0).getObject(0).toString());
      assertEquals("45", r.getVector(1).getObject(0).toString());
    }
  }

  private static void checkBig(GpuSession s) {
    VectorSchemaRoot r = s.query(BIG);
    try (r) {
      assertEquals(ROWS, r.getRowCount());
      assertEquals((long) ROWS - 1, ((BigIntVector) r.getVector(0)).get(0));
      assertEquals(2L * (ROWS - 1), ((BigIntVector) r.getVector(1)).get(0));
      assertEquals(0L, ((BigIntVector) r.getVector(0)).get(ROWS - 1));
    }
  }
}
