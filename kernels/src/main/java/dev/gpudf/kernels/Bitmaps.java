package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.Pointers;
import dev.gpudf.columnar.error.UserException;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Operations on Arrow validity bitmaps (LSB-first, 1 = valid), on the device and, with the same
 * contract, on the host. Null counts of kernel outputs come from here.
 */
public final class Bitmaps {
  private Bitmaps() {}

  /** Set bits among the first {@code bits} of a device bitmap; waits for the result. */
  public static long countSet(Gpu gpu, DeviceBuffer bitmap, long bits, CudaStream stream) {
    checkBits(bitmap.size(), bits);
    try (DeviceBuffer out = gpu.allocate(8, stream)) {
      check(JCudaDriver.cuMemsetD8Async(out.pointer(), (byte) 0, 8, stream.handle()), "cuMemsetD8Async");
      if (bits > 0) {
        KernelLaunch.launch("bitmap_count_set_kernel", KernelLaunch.gridFor(stream.device(), bits / 32),
            stream, bitmap, bits, out);
      }
      // a Java array is pageable: copy synchronously, after the stream's work is done
      stream.synchronize();
      long[] result = {0};
      check(JCudaDriver.cuMemcpyDtoH(jcuda.Pointer.to(result), Pointers.device(out.address()), 8), "cuMemcpyDtoH");
      return result[0];
    }
  }

  /** The CPU twin of {@link #countSet(Gpu, DeviceBuffer, long, CudaStream)}. */
  public static long countSet(ArrowBuf bitmap, long bits) {
    checkBits(bitmap.capacity(), bits);
    long count = 0;
    long words = bits / 64;
    for (long w = 0; w < words; w++) {
      count += Long.bitCount(bitmap.getLong(8 * w));
    }
    for (long i = words * 64; i < bits; i++) {
      count += (bitmap.getByte(i >>> 3) >>> (i & 7)) & 1;
    }
    return count;
  }

  private static void checkBits(long bytes, long bits) {
    if (bits < 0 || (bits + 7) / 8 > bytes) {
      throw new UserException("bitmap of " + bytes + " bytes cannot hold " + bits + " bits");
    }
  }
}
