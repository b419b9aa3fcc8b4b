package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.kernels.Evaluate.StoreKind;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The kernels generated for programs ({@link PtxProgram}) on one device, compiled by the driver
 * on first use and kept for the device's lifetime: a query that runs again finds its kernel here,
 * and a program whose text is another's (they differ only in their literals, which the kernel
 * reads at run time) shares that one's module. The device owns this cache (as an attachment) and
 * unloads every module when it closes. Modules are never unloaded earlier, since a launch may
 * still be in flight on some stream; past {@link #LIMIT} programs, new ones stay with the
 * interpreter instead.
 *
 * <p>A new program's kernel is compiled by the call that first meets it. Its load took 40-90 ms of
 * some TPC-H SF10 cold runs from Parquet on an H100 (q3, q7, q20, q21), with the same text every
 * process and in the driver's cache; with the files' reads ahead off, the same loads took 0.3-0.9
 * ms: the load waited behind the device work of reads under way, which the query needs next anyway.
 * A compile on a thread of its own, the first calls in the interpreter meanwhile, made no
 * measurable difference to those runs (session 44), and was taken out.
 */
final class GeneratedKernels implements AutoCloseable {
  /** Modules kept per device. */
  static final int LIMIT = 1024;
  /**
   * With {@code -Dgpudf.debug.ptxDir=DIR}, each module's text is written there as it is compiled
   * ({@code <SHA-256 of the text>.ptx}) and a line "hash milliseconds" appended to
   * {@code DIR/compiles.txt}: two processes' files show which programs differ between them, which
   * the driver's cache of compiled PTX then misses.
   */
  private static final String PTX_DIR = System.getProperty("gpudf.debug.ptxDir");
  private final CudaDevice device;
  private final Map<Key, Kernel> kernels = new HashMap<>();
  // by module text: what was compiled (each module once, unloaded at close)
  private final Map<String, Kernel> compiled = new HashMap<>();
  private long compileNanos;
  private boolean closed;

  /** A generated entry point, the blocks of {@link KernelLaunch#BLOCK} threads one multiprocessor holds, and its module. */
  record Kernel(CUfunction function, int residentBlocks, CUmodule module) {}

  /** What a generated kernel depends on: the instructions, the constants written into them, the store. */
  private record Key(List<Integer> code, List<Long> constants, int registers, int result, StoreKind store) {
    static Key of(Program p, StoreKind store) {
      return new Key(Arrays.stream(p.code()).boxed().toList(), Arrays.stream(p.constants()).boxed().toList(),
          p.registers(), p.resultRegister(), store);
    }
  }

  private GeneratedKernels(CudaDevice device) {
    this.device = device;
  }

  /** The cache on {@code device}. */
  static GeneratedKernels on(CudaDevice device) {
    return device.attachment(GeneratedKernels.class, () -> new GeneratedKernels(device));
  }

  /**
   * The kernel for {@code p} written out as {@code store} ({@link PtxProgram#supports} must hold),
   * generated and compiled now if it is new; null when the cache is full or closed.
   */
  Kernel kernel(Program p, StoreKind store) {
    Key key = Key.of(p, store);
    String ptx;
    synchronized (this) {
      Kernel k = kernels.get(key);
      if (k != null || kernels.size() >= LIMIT || closed) {
        return k;
      }
      ptx = PtxProgram.generate(p, store);
      k = compiled.get(ptx);
      if (k != null) {
        kernels.put(key, k);
        return k;
      }
    }
    // compiled outside the lock: another program's call need not wait for this one's compile
    long t0 = System.nanoTime();
    Kernel k = compile(ptx);
    long nanos = System.nanoTime() - t0;
    if (PTX_DIR != null) {
      record(ptx, nanos);
    }
    synchronized (this) {
      // a kernel compiled after close would outlive the modules' unloading
      if (closed) {
        unload(k.module);
        return null;
      }
      // another thread may have compiled the same text meanwhile: one module is kept
      Kernel same = compiled.putIfAbsent(ptx, k);
      if (same != null) {
        unload(k.module);
        k = same;
      }
      kernels.put(key, k);
      compileNanos += nanos;
      return k;
    }
  }

  private Kernel compile(String ptx) {
    byte[] text = (ptx + "\0").getBytes(StandardCharsets.US_ASCII);
    device.makeCurrent();
    CUmodule module = new CUmodule();
    check(JCudaDriver.cuModuleLoadData(module, text), "cuModuleLoadData(generated expression kernel)");
    try {
      CUfunction f = new CUfunction();
      check(JCudaDriver.cuModuleGetFunction(f, module, PtxProgram.ENTRY), "cuModuleGetFunction(" + PtxProgram.ENTRY + ")");
      int[] blocks = new int[1];
      check(JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, KernelLaunch.BLOCK, 0),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + PtxProgram.ENTRY + ")");
      return new Kernel(f, Math.max(1, blocks[0]), module);
    } catch (RuntimeException e) {
      try {
        unload(module);
      } catch (RuntimeException u) {
        e.addSuppressed(u);
      }
      throw e;
    }
  }

  private void unload(CUmodule module) {
    device.makeCurrent();
    check(JCudaDriver.cuModuleUnload(module), "cuModuleUnload(generated expression kernel)");
  }

  /** Writes {@code ptx} and the time its compile took into {@link #PTX_DIR}; a failure to is reported, not thrown. */
  private static void record(String ptx, long nanos) {
    try {
      byte[] hash = java.security.MessageDigest.getInstance("SHA-256").digest(ptx.getBytes(StandardCharsets.US_ASCII));
      String name = java.util.HexFormat.of().formatHex(hash);
      java.nio.file.Path dir = java.nio.file.Path.of(PTX_DIR);
      java.nio.file.Files.createDirectories(dir);
      java.nio.file.Files.writeString(dir.resolve(name + ".ptx"), ptx);
      java.nio.file.Files.writeString(dir.resolve("compiles.txt"), name + " " + String.format("%.1f", nanos / 1e6) + "\n",
          java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    } catch (java.io.IOException | java.security.NoSuchAlgorithmException e) {
      System.err.println("gpudf: -Dgpudf.debug.ptxDir: could not record a generated kernel: " + e);
    }
  }

  /** Kernels compiled so far (modules loaded). */
  synchronized int size() {
    return compiled.size();
  }

  /** Kernels compiled so far and the time their compiles and loads took ({@link Evaluate.GeneratedKernelStats}). */
  synchronized Evaluate.GeneratedKernelStats stats() {
    return new Evaluate.GeneratedKernelStats(compiled.size(), compileNanos);
  }

  /** Unloads every module; a kernel asked for later is not made. */
  @Override
  public synchronized void close() {
    closed = true;
    device.makeCurrent();
    RuntimeException first = null;
    for (Kernel k : compiled.values()) {
      try {
        unload(k.module());
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    kernels.clear();
    compiled.clear();
    if (first != null) {
      throw first;
    }
  }
}
