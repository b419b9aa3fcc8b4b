package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.Cuda;
import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.kernels.Evaluate.StoreKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUjitInputType;
import jcuda.driver.CUlinkState;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.driver.JITOptions;

/**
 * The kernels generated for programs ({@link PtxProgram}) on one device, compiled by the driver
 * on first use and kept for the device's lifetime: a query that runs again finds its kernel here.
 * Compiled kernels are also kept on disk ({@link KernelCache}), so a fresh process loads the
 * machine code instead of compiling the PTX again.
 * The device owns this cache (as an attachment) and unloads every module when it closes. Modules
 * are never unloaded earlier, since a launch may still be in flight on some stream; past {@link
 * #LIMIT} programs, new ones stay with the interpreter instead.
 */
final class GeneratedKernels implements AutoCloseable {
  /** Modules kept per device. */
  static final int LIMIT = 1024;
  private final CudaDevice device;
  private final Map<Key, Kernel> kernels = new HashMap<>();
  private final List<CUmodule> modules = new ArrayList<>();
  private final KernelCache disk;
  private long compileNanos;
  private int fromDisk;
  private boolean diskFailureLogged;

  /** A generated entry point and the blocks of {@link KernelLaunch#BLOCK} threads one multiprocessor holds. */
  record Kernel(CUfunction function, int residentBlocks) {}

  /** What a generated kernel depends on: the instructions, the constants written into them, the store. */
  private record Key(List<Integer> code, List<Long> constants, int registers, int result, StoreKind store) {
    static Key of(Program p, StoreKind store) {
      return new Key(Arrays.stream(p.code()).boxed().toList(), Arrays.stream(p.constants()).boxed().toList(),
          p.registers(), p.resultRegister(), store);
    }
  }

  private GeneratedKernels(CudaDevice device) {
    this.device = device;
    this.disk = new KernelCache(KernelCache.configuredDirectory(),
        device.name() + "|sm_" + device.computeCapability() + "|driver " + Cuda.availability().driverVersion());
  }

  /** The cache on {@code device}. */
  static GeneratedKernels on(CudaDevice device) {
    return device.attachment(GeneratedKernels.class, () -> new GeneratedKernels(device));
  }

  /**
   * The kernel for {@code p} written out as {@code store} ({@link PtxProgram#supports} must hold),
   * generated and compiled now if it is new; null when the cache is full.
   */
  synchronized Kernel kernel(Program p, StoreKind store) {
    Key key = Key.of(p, store);
    Kernel k = kernels.get(key);
    if (k != null || kernels.size() >= LIMIT) {
      return k;
    }
    long t0 = System.nanoTime();
    byte[] text = (PtxProgram.generate(p, store) + "\0").getBytes(StandardCharsets.US_ASCII);
    device.makeCurrent();
    CUmodule module = load(text);
    modules.add(module);
    CUfunction f = new CUfunction();
    check(JCudaDriver.cuModuleGetFunction(f, module, PtxProgram.ENTRY), "cuModuleGetFunction(" + PtxProgram.ENTRY + ")");
    int[] blocks = new int[1];
    check(JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, KernelLaunch.BLOCK, 0),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + PtxProgram.ENTRY + ")");
    k = new Kernel(f, Math.max(1, blocks[0]));
    kernels.put(key, k);
    compileNanos += System.nanoTime() - t0;
    return k;
  }

  /**
   * The module for PTX {@code text}: from the disk cache when it holds the machine code (and the
   * driver accepts it), else compiled now and stored there.
   */
  private CUmodule load(byte[] text) {
    CUmodule module = new CUmodule();
    if (!disk.enabled()) {
      check(JCudaDriver.cuModuleLoadData(module, text), "cuModuleLoadData(generated expression kernel)");
      return module;
    }
    String key = disk.key(text);
    byte[] cubin = null;
    try {
      cubin = disk.read(key);
    } catch (IOException e) {
      diskFailed("read", e);
    }
    if (cubin != null && JCudaDriver.cuModuleLoadData(module, cubin) == CUresult.CUDA_SUCCESS) {
      fromDisk++;
      return module;
    }
    // no file, or one the driver refuses (it is replaced): compiled now
    cubin = compile(text);
    try {
      disk.write(key, cubin);
    } catch (IOException e) {
      diskFailed("write", e);
    }
    check(JCudaDriver.cuModuleLoadData(module, cubin), "cuModuleLoadData(generated expression kernel)");
    return module;
  }

  /** PTX to this device's machine code, through the driver's linker (the same compiler a PTX load runs). */
  private static byte[] compile(byte[] ptx) {
    CUlinkState link = new CUlinkState();
    check(JCudaDriver.cuLinkCreate(new JITOptions(), link), "cuLinkCreate");
    try {
      check(JCudaDriver.cuLinkAddData(link, CUjitInputType.CU_JIT_INPUT_PTX, Pointer.to(ptx), ptx.length,
          "generated", new JITOptions()), "cuLinkAddData(generated expression kernel)");
      Pointer image = new Pointer();
      long[] size = {0};
      check(JCudaDriver.cuLinkComplete(link, image, size), "cuLinkComplete(generated expression kernel)");
      if (size[0] <= 0 || size[0] > KernelCache.MAX_BYTES) {
        throw new dev.gpudf.columnar.error.InternalException("the driver's linker made " + size[0]
            + " bytes of machine code for one generated kernel");
      }
      // the linker owns the image until cuLinkDestroy: copied out first
      java.nio.ByteBuffer bytes = image.getByteBuffer(0, size[0]);
      if (bytes == null) {
        throw new dev.gpudf.columnar.error.InternalException("JCuda gave no view of the linker's machine code");
      }
      byte[] cubin = new byte[(int) size[0]];
      bytes.get(cubin);
      return cubin;
    } finally {
      check(JCudaDriver.cuLinkDestroy(link), "cuLinkDestroy");
    }
  }

  /** A disk cache that cannot be read or written costs only time: said once per device, then the run goes on. */
  private void diskFailed(String what, IOException e) {
    if (!diskFailureLogged) {
      diskFailureLogged = true;
      System.getLogger(GeneratedKernels.class.getName()).log(System.Logger.Level.WARNING,
          "cannot " + what + " the generated-kernel cache (kernels are compiled each run): " + e);
    }
  }

  /** Kernels compiled so far. */
  synchronized int size() {
    return kernels.size();
  }

  /** Kernels compiled so far and the time spent generating and loading them (the driver's PTX compile). */
  synchronized Evaluate.GeneratedKernelStats stats() {
    return new Evaluate.GeneratedKernelStats(kernels.size(), compileNanos, fromDisk);
  }

  @Override
  public synchronized void close() {
    device.makeCurrent();
    RuntimeException first = null;
    for (CUmodule m : modules) {
      try {
        check(JCudaDriver.cuModuleUnload(m), "cuModuleUnload(generated expression kernel)");
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    modules.clear();
    kernels.clear();
    if (first != null) {
      throw first;
    }
  }
}
