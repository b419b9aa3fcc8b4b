package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.NotSupportedException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The fatbin that nvcc built from {@code src/main/cuda} at build time, loaded once per open
 * {@link CudaDevice} into its primary context, and its {@code *_kernel} entry points looked up by
 * name. The device owns the module (as an attachment) and unloads it when it closes.
 */
public final class KernelModule implements AutoCloseable {
  private static final String RESOURCE = "/dev/gpudf/kernels/gpudf.fatbin";
  private static final byte[] FATBIN = readFatbin();
  private final CudaDevice device;
  private final CUmodule module = new CUmodule();
  private final Map<String, CUfunction> functions = new ConcurrentHashMap<>();
  private final Map<String, Integer> residentBlocks = new ConcurrentHashMap<>();

  private KernelModule(CudaDevice device) {
    this.device = device;
    device.makeCurrent();
    check(JCudaDriver.cuModuleLoadData(module, FATBIN), "cuModuleLoadData(gpudf.fatbin)");
  }

  /** True when the build compiled the kernels (nvcc was present). */
  public static boolean isBuilt() {
    return FATBIN != null;
  }

  /** One line on the kernels' state, for {@code gpudf info}. */
  public static String status() {
    return isBuilt() ? "built (" + FATBIN.length + " byte fatbin, SASS sm_80 + sm_90, PTX compute_90)"
        : "not built: nvcc was not found when gpudf was compiled, so the GPU backend has no kernels";
  }

  /** The module on {@code device}, loaded on first use. Throws if the kernels were not built. */
  public static KernelModule on(CudaDevice device) {
    if (!isBuilt()) {
      throw new NotSupportedException("GPU kernels are " + status());
    }
    return device.attachment(KernelModule.class, () -> new KernelModule(device));
  }

  /** The entry point {@code name}; throws {@link InternalException} if the fatbin lacks it. */
  public CUfunction function(String name) {
    return functions.computeIfAbsent(name, n -> {
      CUfunction f = new CUfunction();
      check(JCudaDriver.cuModuleGetFunction(f, module, n), "cuModuleGetFunction(" + n + ")");
      return f;
    });
  }

  /**
   * Blocks of {@code block} threads of kernel {@code name} that one multiprocessor holds at once
   * (registers and shared memory permitting), as the driver's occupancy calculator says.
   */
  public int residentBlocksPerMultiprocessor(String name, int block) {
    return residentBlocks.computeIfAbsent(name + "/" + block, k -> {
      int[] blocks = new int[1];
      device.makeCurrent();
      check(JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, function(name), block, 0),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + name + ")");
      return Math.max(1, blocks[0]);
    });
  }

  @Override
  public void close() {
    device.makeCurrent();
    check(JCudaDriver.cuModuleUnload(module), "cuModuleUnload");
  }

  private static byte[] readFatbin() {
    try (InputStream in = KernelModule.class.getResourceAsStream(RESOURCE)) {
      return in == null ? null : in.readAllBytes();
    } catch (IOException e) {
      throw new InternalException("cannot read " + RESOURCE, e);
    }
  }
}
