package dev.gpudf.kernels;

import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.Pointers;
import dev.gpudf.columnar.error.NotSupportedException;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Per-query execution state for the eager operations: the GPU and the query's own stream (GPU
 * backend), and the Arrow allocator that host results come from (both backends). Operations are
 * stateless and take one of these; whoever creates it closes it, which closes the stream.
 */
public final class Exec implements AutoCloseable {
  private final Gpu gpu;
  private final CudaStream stream;
  private final BufferAllocator allocator;

  private Exec(Gpu gpu, BufferAllocator allocator) {
    this.gpu = gpu;
    this.stream = gpu == null ? null : gpu.newStream();
    this.allocator = allocator;
  }

  /** State for work on {@code gpu}, on a new stream; host results come from {@code allocator}. */
  public static Exec onGpu(Gpu gpu, BufferAllocator allocator) {
    return new Exec(gpu, allocator);
  }

  /** State for the CPU backend only. */
  public static Exec onCpu(BufferAllocator allocator) {
    return new Exec(null, allocator);
  }

  /** The GPU; throws {@link NotSupportedException} for CPU-only state. */
  public Gpu gpu() {
    if (gpu == null) {
      throw new NotSupportedException("a device column was given to a CPU-only execution context");
    }
    return gpu;
  }

  public CudaStream stream() {
    gpu();
    return stream;
  }

  public BufferAllocator allocator() {
    return allocator;
  }

  /** A device buffer on this query's stream; the caller owns it. */
  public DeviceBuffer allocate(long bytes) {
    return gpu().allocate(bytes, stream());
  }

  /** Waits for the query's queued work and reads the first {@code count} longs of {@code buffer}. */
  public long[] readLongs(DeviceBuffer buffer, int count) {
    long[] out = new long[count];
    if (count > 0) {
      // a Java array is pageable memory: copy synchronously, after the stream's work is done
      stream().synchronize();
      dev.gpudf.columnar.cuda.Cuda.check(JCudaDriver.cuMemcpyDtoH(Pointer.to(out), Pointers.device(buffer.address()),
          8L * count), "cuMemcpyDtoH");
    }
    return out;
  }

  @Override
  public void close() {
    if (stream != null) {
      stream.close();
    }
  }
}
