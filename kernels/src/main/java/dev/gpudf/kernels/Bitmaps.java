package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.Pointers;
import dev.gpudf.columnar.error.UserException;
import jcuda.driver.JCudaDriver;

/**
 * Operations on Arrow validity bitmaps (LSB-first, 1 = valid) on the device; null counts of
 * kernel outputs come from here. The CPU twin is {@link dev.gpudf.columnar.HostBitmaps}.
 */
public final class Bitmaps {
  private Bitmaps() {}

  /** Set bits among the first {@code bits} of a device bitmap; waits for the result. */
  public static long countSet(Gpu gpu, DeviceBuffer bitmap, long bits, CudaStream stream) {
    return countSet(gpu, bitmap, null, bits, stream);
  }

  /**
   * Positions among the first {@code bits} set in both {@code a} and, unless null, {@code b}
   * (the valid trues of a BOOL column: data and validity); waits for the result.
   */
  public static long countSet(Gpu gpu, DeviceBuffer a, DeviceBuffer b, long bits, CudaStream stream) {
    try (DeviceBuffer out = gpu.allocate(8, stream)) {
      check(JCudaDriver.cuMemsetD8Async(out.pointer(), (byte) 0, 8, stream.handle()), "cuMemsetD8Async");
      addSetCount(a, b, bits, out.address(), stream);
      // a Java array is pageable: copy synchronously, after the stream's work is done
      stream.synchronize();
      long[] result = {0};
      check(JCudaDriver.cuMemcpyDtoH(jcuda.Pointer.to(result), Pointers.device(out.address()), 8), "cuMemcpyDtoH");
      return result[0];
    }
  }

  /**
   * Queues the count of positions among the first {@code bits} set in {@code a} and, unless null,
   * {@code b}, added to the int64 at device address {@code counter}; nothing waits, so a caller can
   * read many counts back in one wait.
   */
  static void addSetCount(DeviceBuffer a, DeviceBuffer b, long bits, long counter, CudaStream stream) {
    checkBits(a.size(), bits);
    if (b != null) {
      checkBits(b.size(), bits);
    }
    if (bits > 0) {
      KernelLaunch.launch("bitmap_count_set_kernel", KernelLaunch.gridFor(stream.device(), bits / 32), stream, a, b, bits,
          counter);
    }
  }

  private static void checkBits(long bytes, long bits) {
    if (bits < 0 || (bits + 7) / 8 > bytes) {
      throw new UserException("bitmap of " + bytes + " bytes cannot hold " + bits + " bits");
    }
  }
}
