package dev.gpudf.columnar.cuda;

import dev.gpudf.columnar.error.DeviceFatalException;
import dev.gpudf.columnar.error.InternalException;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Entry to the CUDA driver through JCuda: finds out once whether a usable driver and device are
 * present (and, if not, why), and turns every driver status code into a typed exception.
 */
public final class Cuda {
  private static volatile Availability availability;

  private Cuda() {}

  /** Whether CUDA can be used in this process, and if not, the reason; probed once. */
  public record Availability(boolean available, String reason, int deviceCount, int driverVersion) {
    /** Driver version as major.minor, e.g. "13.0". */
    public String driverVersionString() {
      return driverVersion / 1000 + "." + (driverVersion % 1000) / 10;
    }
  }

  /** Probes the driver on first use; never throws. */
  public static Availability availability() {
    Availability a = availability;
    if (a == null) {
      synchronized (Cuda.class) {
        a = availability;
        if (a == null) {
          a = probe();
          availability = a;
        }
      }
    }
    return a;
  }

  /** True where a CUDA driver loaded and at least one device is visible. */
  public static boolean isAvailable() {
    return availability().available();
  }

  /** Throws {@link dev.gpudf.columnar.error.NotSupportedException} with the reason CUDA is unusable. */
  public static void requireAvailable() {
    Availability a = availability();
    if (!a.available()) {
      throw new dev.gpudf.columnar.error.NotSupportedException("the GPU backend is off: " + a.reason());
    }
  }

  private static Availability probe() {
    try {
      JCudaDriver.setExceptionsEnabled(false);
      int rc = JCudaDriver.cuInit(0);
      if (rc != CUresult.CUDA_SUCCESS) {
        return new Availability(false, "cuInit failed: " + CUresult.stringFor(rc), 0, 0);
      }
      int[] count = {0};
      check(JCudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount");
      int[] version = {0};
      check(JCudaDriver.cuDriverGetVersion(version), "cuDriverGetVersion");
      if (count[0] == 0) {
        return new Availability(false, "the CUDA driver sees no device", 0, version[0]);
      }
      return new Availability(true, "ok", count[0], version[0]);
    } catch (LinkageError e) {
      // JCuda's native library links libcuda.so.1; on a host without the NVIDIA driver it fails to load.
      String m = String.valueOf(e.getMessage());
      String why = m.contains("libcuda.so.1") ? "libcuda.so.1 is not installed (no NVIDIA driver on this host)"
          : m.lines().findFirst().orElse(m);
      return new Availability(false, "the CUDA driver could not be loaded: " + why, 0, 0);
    } catch (RuntimeException e) {
      return new Availability(false, "probing CUDA failed: " + e, 0, 0);
    }
  }

  /**
   * Throws unless {@code result} is CUDA_SUCCESS. Sticky errors, after which the context is
   * unusable, become {@link DeviceFatalException}; all others {@link InternalException}.
   */
  public static void check(int result, String call) {
    if (result == CUresult.CUDA_SUCCESS) {
      return;
    }
    String message = call + " failed: " + CUresult.stringFor(result);
    if (isSticky(result)) {
      throw new DeviceFatalException(message);
    }
    throw new InternalException(message);
  }

  static boolean isSticky(int result) {
    return result == CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
        || result == CUresult.CUDA_ERROR_LAUNCH_FAILED
        || result == CUresult.CUDA_ERROR_ECC_UNCORRECTABLE
        || result == CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR
        || result == CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION
        || result == CUresult.CUDA_ERROR_MISALIGNED_ADDRESS
        || result == CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE
        || result == CUresult.CUDA_ERROR_INVALID_PC
        || result == CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED;
  }
}
