package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * {@link GpuSession#scanBytes}, the least a query must read (what a report's roofline divides by
 * the memory's bandwidth): the columns its scans read, each chunk's column once however often the
 * plan scans it, none for a row count.
 */
class ScanBytesTest {
  private static final int CHUNK = 1_000;

  @Test
  void countsEachColumnAQueryReadsOnce() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      long[] bytes = load(s, a);
      assertEquals(bytes[1], s.scanBytes("SELECT SUM(v) FROM t"));
      assertEquals(bytes[0] + bytes[1], s.scanBytes("SELECT SUM(v) FROM t WHERE k > 10"));
      assertEquals(bytes[0] + bytes[1] + bytes[2], s.scanBytes("SELECT * FROM t"));
      assertEquals(bytes[0] + bytes[2], s.scanBytes("SELECT name FROM t WHERE k % 7 = 1 ORDER BY name"));
      // a self-join and a sub-query read the same columns again: they count once
      assertEquals(bytes[0] + bytes[1],
          s.scanBytes("SELECT SUM(x.v) FROM t x JOIN t y ON x.k = y.k WHERE y.v > (SELECT AVG(v) FROM t)"));
      assertEquals(0, s.scanBytes("SELECT COUNT(*) FROM t"));
      assertEquals(0, s.scanBytes("SELECT 1 + 2"));
    }
  }

  /** On the device: the columns' device buffers, which together are what the catalog says the table holds there. */
  @RequiresGpu
  @Test
  void countsDeviceBytesOnTheGpu() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0); GpuSession s = GpuSession.gpu(gpu, a)) {
      load(s, a);
      long k = s.scanBytes("SELECT SUM(k) FROM t");
      long v = s.scanBytes("SELECT SUM(v) FROM t");
      long name = s.scanBytes("SELECT MAX(name) FROM t");
      assertTrue(k >= 3 * CHUNK * 4L && v >= 3 * CHUNK * 8L && name >= 3 * CHUNK * 5L, k + " " + v + " " + name);
      assertEquals(s.catalog().residency("t").deviceBytes(), s.scanBytes("SELECT * FROM t"));
      assertEquals(k + v + name, s.scanBytes("SELECT * FROM t"));
      assertEquals(k + v, s.scanBytes("SELECT SUM(x.v) FROM t x JOIN t y ON x.k = y.k"));
    }
  }

  /**
   * Three chunks of (k INT, v BIGINT, name VARCHAR) into table t of {@code s}; returns each
   * column's Arrow bytes summed over the chunks.
   */
  private static long[] load(GpuSession s, RootAllocator a) {
    s.catalog().maxChunkRows(CHUNK);
    long[] bytes = new long[3];
    for (int part = 0; part < 3; part++) {
      try (VectorSchemaRoot rows = rows(a, part * CHUNK, CHUNK)) {
        for (int c = 0; c < 3; c++) {
          bytes[c] += rows.getVector(c).getBufferSize();
        }
        if (part == 0) {
          s.catalog().register("t", rows);
        } else {
          s.catalog().append("t", rows);
        }
      }
    }
    assertEquals(3, s.catalog().shape("t").chunks());
    return bytes;
  }

  /** Rows {@code from} .. {@code from + n - 1}: k = x, v = 3x (NULL where x % 10 = 0), name = "név x". */
  private static VectorSchemaRoot rows(RootAllocator a, int from, int n) {
    IntVector k = new IntVector("k", a);
    BigIntVector v = new BigIntVector("v", a);
    VarCharVector name = new VarCharVector("name", a);
    k.allocateNew(n);
    v.allocateNew(n);
    name.allocateNew();
    for (int i = 0; i < n; i++) {
      int x = from + i;
      k.set(i, x);
      if (x % 10 != 0) {
        v.set(i, 3L * x);
      }
      name.setSafe(i, ("név " + x).getBytes(StandardCharsets.UTF_8));
    }
    List<FieldVector> vectors = List.of(k, v, name);
    vectors.forEach(vec -> vec.setValueCount(n));
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(n);
    return root;
  }
}
