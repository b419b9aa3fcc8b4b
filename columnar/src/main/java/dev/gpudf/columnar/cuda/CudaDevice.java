package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.RefCounted;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.UserException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.JCudaDriver;

/**
 * One GPU and its primary context (retained, so other CUDA code in the process shares it).
 * Whoever opens it closes it; closing releases the primary-context reference.
 */
public final class CudaDevice extends RefCounted {
  private final int ordinal;
  private final CUdevice device = new CUdevice();
  private final CUcontext context = new CUcontext();
  private final String name;
  private final long totalMemory;
  private final int computeMajor;
  private final int computeMinor;
  private final int multiprocessors;
  private final Map<Class<?>, AutoCloseable> attachments = new ConcurrentHashMap<>();

  private CudaDevice(int ordinal) {
    this.ordinal = ordinal;
    check(JCudaDriver.cuDeviceGet(device, ordinal), "cuDeviceGet");
    check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
    makeCurrent();
    byte[] buf = new byte[256];
    check(JCudaDriver.cuDeviceGetName(buf, buf.length, device), "cuDeviceGetName");
    int len = 0;
    while (len < buf.length && buf[len] != 0) {
      len++;
    }
    name = new String(buf, 0, len, StandardCharsets.US_ASCII);
    long[] mem = {0};
    check(JCudaDriver.cuDeviceTotalMem(mem, device), "cuDeviceTotalMem");
    totalMemory = mem[0];
    computeMajor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    computeMinor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    multiprocessors = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  }

  /** Opens device {@code ordinal}; throws if CUDA is unavailable or the ordinal does not exist. */
  public static CudaDevice open(int ordinal) {
    Cuda.requireAvailable();
    int count = Cuda.availability().deviceCount();
    if (ordinal < 0 || ordinal >= count) {
      throw new UserException("no CUDA device " + ordinal + ": " + count + " device(s) visible");
    }
    return new CudaDevice(ordinal);
  }

  private int attribute(int attribute) {
    int[] v = {0};
    check(JCudaDriver.cuDeviceGetAttribute(v, attribute, device), "cuDeviceGetAttribute");
    return v[0];
  }

  /** Binds this device's primary context to the calling thread; cheap, called at every entry point. */
  public void makeCurrent() {
    check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }

  /** Waits for all work on the device. */
  public void synchronize() {
    DeviceActivity.waited();
    makeCurrent();
    check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize");
  }

  /** Free and total device memory as the driver reports it, in bytes. */
  public long[] memoryInfo() {
    makeCurrent();
    long[] free = {0};
    long[] total = {0};
    check(JCudaDriver.cuMemGetInfo(free, total), "cuMemGetInfo");
    return new long[] {free[0], total[0]};
  }

  public int ordinal() {
    return ordinal;
  }

  public String name() {
    return name;
  }

  public long totalMemory() {
    return totalMemory;
  }

  /** Compute capability as e.g. "9.0". */
  public String computeCapability() {
    return computeMajor + "." + computeMinor;
  }

  public int multiprocessors() {
    return multiprocessors;
  }

  /**
   * The per-context resource of type {@code type} (a loaded kernel module, say), created on first
   * use. Resources live in the primary context, so they are closed, in no particular order,
   * before this device releases it; a later {@link #open} loads them afresh.
   */
  public <T extends AutoCloseable> T attachment(Class<T> type, Supplier<T> create) {
    checkOpen();
    return type.cast(attachments.computeIfAbsent(type, t -> create.get()));
  }

  @Override
  protected void release() {
    makeCurrent();
    RuntimeException first = null;
    for (AutoCloseable a : attachments.values()) {
      try {
        a.close();
      } catch (Exception e) {
        if (first == null) {
          first = new InternalException("closing " + a + " failed", e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    attachments.clear();
    check(JCudaDriver.cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease");
    if (first != null) {
      throw first;
    }
  }

  @Override
  public String toString() {
    return "CudaDevice[" + ordinal + ": " + name + "]";
  }
}
