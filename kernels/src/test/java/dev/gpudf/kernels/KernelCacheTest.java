package dev.gpudf.kernels;

import static dev.gpudf.kernels.Expr.call;
import static dev.gpudf.kernels.Expr.col;
import static dev.gpudf.kernels.Expr.lit;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk cache of compiled generated kernels: its files, and on a GPU a fresh device loading from it. */
class KernelCacheTest {
  @TempDir
  Path dir;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void storesReadsBackAndRejectsDamagedFiles() throws Exception {
    KernelCache cache = new KernelCache(dir, "H100|sm_9.0|driver 13000");
    String key = cache.key(bytes(".entry k {}"));
    assertNull(cache.read(key));
    byte[] cubin = bytes("\u007fELF machine code");
    cache.write(key, cubin);
    assertArrayEquals(cubin, cache.read(key));
    // nothing is left beside the file (the temporary one was renamed)
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(key + ".cubin"), files.map(p -> p.getFileName().toString()).toList());
    }
    Path f = dir.resolve(key + ".cubin");
    byte[] stored = Files.readAllBytes(f);
    for (int at : new int[] {0, cubin.length - 1, stored.length - 1}) {
      byte[] damaged = stored.clone();
      damaged[at] ^= 1;
      Files.write(f, damaged);
      assertNull(cache.read(key), "a byte changed at " + at);
    }
    Files.write(f, java.util.Arrays.copyOf(stored, stored.length - 1));
    assertNull(cache.read(key), "truncated");
    Files.write(f, new byte[0]);
    assertNull(cache.read(key), "empty");
    cache.write(key, cubin);
    assertArrayEquals(cubin, cache.read(key), "written again over a damaged file");
  }

  @Test
  void keysSeparateMachinesAndPrograms() {
    KernelCache h100 = new KernelCache(dir, "H100|sm_9.0|driver 13000");
    KernelCache newer = new KernelCache(dir, "H100|sm_9.0|driver 13010");
    byte[] ptx = bytes(".entry k {}");
    assertEquals(h100.key(ptx), h100.key(ptx.clone()));
    assertNotEquals(h100.key(ptx), newer.key(ptx));
    assertNotEquals(h100.key(ptx), h100.key(bytes(".entry k { }")));
    assertTrue(h100.key(ptx).matches("[0-9a-f]{64}"));
  }

  @Test
  void offKeepsNoFiles() throws Exception {
    KernelCache off = new KernelCache(null, "any");
    off.write("k", bytes("x"));
    assertNull(off.read("k"));
    String before = System.getProperty("gpudf.kernelCache");
    try {
      System.setProperty("gpudf.kernelCache", "off");
      assertNull(KernelCache.configuredDirectory());
      System.setProperty("gpudf.kernelCache", dir.toString());
      assertEquals(dir, KernelCache.configuredDirectory());
    } finally {
      restore(before);
    }
  }

  private static void restore(String before) {
    if (before == null) {
      System.clearProperty("gpudf.kernelCache");
    } else {
      System.setProperty("gpudf.kernelCache", before);
    }
  }

  /** Values of {@code e} on a freshly opened device, and how many kernels it generated and loaded from disk. */
  private record Run(List<Object> values, Evaluate.GeneratedKernelStats stats) {}

  private static Run runFresh(RootAllocator allocator, VectorSchemaRoot r, Expr e) {
    try (Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20); Exec g = Exec.onGpu(gpu, allocator);
        DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream()); DeviceColumn c = Evaluate.evaluate(g, d, e)) {
      c.retain();
      try (DeviceTable one = new DeviceTable(gpu, List.of("x"), List.of(c), r.getRowCount());
          VectorSchemaRoot back = one.toArrow(allocator, g.stream())) {
        List<Object> values = new ArrayList<>();
        for (int i = 0; i < back.getRowCount(); i++) {
          values.add(back.getVector(0).getObject(i));
        }
        return new Run(values, Evaluate.generatedKernels(gpu.device()));
      }
    }
  }

  /**
   * A fresh device compiles a generated kernel and stores it; the next fresh device loads it
   * from disk and computes the same values; a damaged file is compiled again and replaced.
   */
  @RequiresGpu
  @Test
  void aFreshDeviceLoadsTheCompiledKernel() throws Exception {
    String before = System.getProperty("gpudf.kernelCache");
    int generatedFrom = Evaluate.setGeneratedMinRows(0);
    System.setProperty("gpudf.kernelCache", dir.toString());
    try (RootAllocator allocator = new RootAllocator();
        VectorSchemaRoot r = TestTables.allTypes(allocator, 1000, Nulls.every(3), 7)) {
      int i64 = r.getSchema().getFields().stream().map(f -> f.getName()).toList().indexOf("i64");
      Expr e = call(Op.ADD, call(Op.MUL, col(i64), lit(3L)), lit(1234567L));
      Run first = runFresh(allocator, r, e);
      assertEquals(1, first.stats().kernels());
      assertEquals(0, first.stats().fromDisk());
      Path file;
      try (Stream<Path> files = Files.list(dir)) {
        List<Path> all = files.toList();
        assertEquals(1, all.size(), all.toString());
        file = all.get(0);
      }
      Run second = runFresh(allocator, r, e);
      assertEquals(1, second.stats().fromDisk());
      assertEquals(first.values(), second.values());
      byte[] stored = Files.readAllBytes(file);
      stored[stored.length / 2] ^= 0x55;
      Files.write(file, stored);
      Run third = runFresh(allocator, r, e);
      assertEquals(0, third.stats().fromDisk(), "a damaged file is no kernel");
      assertEquals(first.values(), third.values());
      assertEquals(1, runFresh(allocator, r, e).stats().fromDisk(), "the file was replaced");
    } finally {
      Evaluate.setGeneratedMinRows(generatedFrom);
      restore(before);
    }
  }
}
