package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.kernels.Evaluate.StoreKind;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
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
 * <p>With {@link Evaluate#setCompileInBackground} on, a new program's text is compiled on a thread
 * of the cache's own while the query that met it goes on with the interpreter, as a tiered JIT
 * compiles: the driver's compile took 10-90 ms of a first run (TPC-H SF10 q20 67-91 ms, q3 and q7
 * about 40, on an H100), more than the interpreter's time on the rows. Later calls of the program
 * find its kernel. A compile that fails leaves the program with the interpreter, logged.
 */
final class GeneratedKernels implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GeneratedKernels.class);
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
  // programs whose compile is under way on the compiler thread, or failed there: the interpreter's
  private final Set<Key> notReady = new HashSet<>();
  // by module text: the programs waiting for its compile on the compiler thread
  private final Map<String, List<Key>> compiling = new HashMap<>();
  private ExecutorService compiler;
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
   * generated and compiled now if it is new; null when the cache is full.
   */
  Kernel kernel(Program p, StoreKind store) {
    Key key = Key.of(p, store);
    String ptx;
    synchronized (this) {
      Kernel k = kernels.get(key);
      if (k != null || notReady.contains(key) || kernels.size() + notReady.size() >= LIMIT || closed) {
        return k;
      }
      ptx = PtxProgram.generate(p, store);
      k = compiled.get(ptx);
      if (k != null) {
        kernels.put(key, k);
        return k;
      }
      if (Evaluate.compileInBackground()) {
        notReady.add(key);
        List<Key> waiting = compiling.get(ptx);
        if (waiting != null) {
          // the same text is being compiled for another program: one compile serves both
          waiting.add(key);
          return null;
        }
        compiling.put(ptx, new ArrayList<>(List.of(key)));
        if (compiler == null) {
          compiler = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "gpudf-kernel-compiler");
            t.setDaemon(true);
            return t;
          });
        }
        compiler.execute(() -> compileFor(ptx, true));
        return null;
      }
    }
    Kernel k = compileFor(ptx, false);
    synchronized (this) {
      if (k != null) {
        kernels.put(key, k);
      }
    }
    return k;
  }

  /**
   * Compiles {@code ptx} (outside the lock: a compile takes milliseconds that other programs' calls
   * need not wait for) and keeps it, the kernel of every program {@link #compiling} waits on it
   * with; in the {@code background} a failure is logged and leaves those programs with the
   * interpreter, on the caller's thread it is thrown. Null when closed meanwhile.
   */
  private Kernel compileFor(String ptx, boolean background) {
    long t0 = System.nanoTime();
    Kernel k;
    try {
      k = compile(ptx);
    } catch (RuntimeException e) {
      if (!background) {
        throw e;
      }
      LOG.warn("a generated expression kernel failed to compile; its program stays with the interpreter: {}", e.toString());
      return null;
    }
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
      // the caller's thread may have compiled the same text meanwhile: one module is kept
      Kernel same = compiled.putIfAbsent(ptx, k);
      if (same != null) {
        unload(k.module);
        k = same;
      }
      for (Key waiting : compiling.getOrDefault(ptx, List.of())) {
        kernels.put(waiting, k);
        notReady.remove(waiting);
      }
      compiling.remove(ptx);
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

  /** Kernels compiled so far and the time the driver spent compiling and loading them. */
  synchronized Evaluate.GeneratedKernelStats stats() {
    return new Evaluate.GeneratedKernelStats(compiled.size(), compileNanos);
  }

  /** Waits for a compile under way, then unloads every module; a compile asked for later is not made. */
  @Override
  public void close() {
    ExecutorService running;
    synchronized (this) {
      closed = true;
      running = compiler;
    }
    if (running != null) {
      running.shutdown();
      try {
        if (!running.awaitTermination(60, TimeUnit.SECONDS)) {
          LOG.warn("a generated expression kernel still compiling after 60 s at close");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    unloadAll();
  }

  private synchronized void unloadAll() {
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
    notReady.clear();
    compiling.clear();
    if (first != null) {
      throw first;
    }
  }
}
