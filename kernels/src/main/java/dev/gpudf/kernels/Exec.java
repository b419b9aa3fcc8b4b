package dev.gpudf.kernels;

import dev.gpudf.columnar.cuda.Cuda;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.PinnedScratch;
import dev.gpudf.columnar.cuda.Pointers;
import dev.gpudf.columnar.error.NotSupportedException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Per-query execution state for the eager operations: the GPU and the query's own stream (GPU
 * backend), and the Arrow allocator that host results come from (both backends). Operations are
 * stateless and take one of these; whoever creates it closes it, which closes the stream.
 */
public final class Exec implements AutoCloseable {
  /** Read-backs up to this size go through pinned memory. */
  private static final int SCRATCH_BYTES = 4096;
  private final Gpu gpu;
  private final CudaStream stream;
  private final BufferAllocator allocator;
  /** Taken from the pinned pool on the first small read-back; returned at close. */
  private PinnedScratch scratch;
  private volatile Runnable checkpoint = () -> { };

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

  /**
   * Bounds the device memory this query's stream may hold at once ({@link CudaStream#limitMemory}):
   * {@code bytes} (0: no bound), {@code source} being the setting named in the error. No effect
   * on the CPU backend.
   */
  public Exec limitDeviceMemory(long bytes, String source) {
    if (stream != null) {
      stream.limitMemory(bytes, source);
    }
    return this;
  }

  /**
   * Runs {@code check} at each checkpoint of this query's work from now on: every device
   * allocation, and the long loops of the CPU twins. A check that throws (a cancelled query, one
   * past its time limit) stops the query there; operators release what they hold on any
   * exception, as for an out-of-memory. It may run on any thread of the query's work.
   */
  public Exec checkpoints(Runnable check) {
    checkpoint = java.util.Objects.requireNonNull(check);
    return this;
  }

  /** {@link dev.gpudf.columnar.Parallel#forEach}: {@code body} for each of 0 .. n - 1, {@code checkpoint} before each. */
  static void parallelChecked(Runnable checkpoint, int n, java.util.function.IntConsumer body) {
    dev.gpudf.columnar.Parallel.forEach(n, checkpoint, body);
  }

  /** Runs the query's check ({@link #checkpoints}); nothing unless one was set. */
  public void checkpoint() {
    checkpoint.run();
  }

  /** Whether this state runs kernels on a GPU (the CPU twins otherwise). */
  public boolean hasGpu() {
    return gpu != null;
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
    checkpoint();
    return gpu().allocate(bytes, stream());
  }

  /** A device buffer of {@code bytes} zero bytes, on this query's stream; the caller owns it. */
  public DeviceBuffer allocateZeroed(long bytes) {
    DeviceBuffer b = allocate(bytes);
    try {
      zero(b, 0, bytes);
    } catch (RuntimeException e) {
      b.close();
      throw e;
    }
    return b;
  }

  /** Queues the zeroing of {@code bytes} of {@code buffer} from {@code offset}. */
  public void zero(DeviceBuffer buffer, long offset, long bytes) {
    fill(buffer, offset, bytes, (byte) 0);
  }

  /** Queues setting {@code bytes} of {@code buffer} from {@code offset} to {@code value}. */
  public void fill(DeviceBuffer buffer, long offset, long bytes, byte value) {
    if (bytes > 0) {
      Cuda.check(JCudaDriver.cuMemsetD8Async(Pointers.device(buffer.address() + offset), value, bytes,
          stream().handle()), "cuMemsetD8Async");
    }
  }

  /** A device copy of {@code values}, ordered on this query's stream; the caller owns it. */
  public DeviceBuffer upload(long[] values) {
    ByteBuffer staged = stage(8 * values.length);
    staged.asLongBuffer().put(values);
    return upload(staged);
  }

  /** A device copy of {@code values}, ordered on this query's stream; the caller owns it. */
  public DeviceBuffer upload(byte[] values) {
    ByteBuffer staged = stage(values.length);
    staged.put(values).rewind();
    return upload(staged);
  }

  /** A device copy of {@code values}, ordered on this query's stream; the caller owns it. */
  public DeviceBuffer upload(int[] values) {
    ByteBuffer staged = stage(4 * values.length);
    staged.asIntBuffer().put(values);
    return upload(staged);
  }

  /**
   * Queues a copy of {@code bytes} of pinned host memory at {@code address} to {@code dst} at
   * {@code dstOffset} on this query's stream: the caller keeps that memory until the stream's
   * work is waited for.
   */
  public void uploadPinned(long address, long bytes, DeviceBuffer dst, long dstOffset) {
    if (bytes > 0) {
      Cuda.check(JCudaDriver.cuMemcpyHtoDAsync(Pointers.device(dst.address() + dstOffset), Pointers.host(address), bytes,
          stream().handle()), "cuMemcpyHtoDAsync");
    }
  }

  private static ByteBuffer stage(int bytes) {
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
  }

  /**
   * Copies on this query's stream: a synchronous copy from pageable memory may return before its
   * data reaches the device, and nothing would order it before the kernels of a non-blocking
   * stream. From pageable (direct) memory the driver stages the bytes before returning.
   */
  private DeviceBuffer upload(ByteBuffer staged) {
    DeviceBuffer b = allocate(staged.capacity());
    if (staged.capacity() > 0) {
      try {
        Cuda.check(JCudaDriver.cuMemcpyHtoDAsync(b.pointer(), Pointer.to(staged), staged.capacity(), stream().handle()),
            "cuMemcpyHtoDAsync");
      } catch (RuntimeException e) {
        b.close();
        throw e;
      }
    }
    return b;
  }

  /** Queues a device-to-device copy of {@code bytes} on this query's stream. */
  public void copy(DeviceBuffer dst, long dstOffset, DeviceBuffer src, long srcOffset, long bytes) {
    if (bytes > 0) {
      Cuda.check(JCudaDriver.cuMemcpyDtoDAsync(Pointers.device(dst.address() + dstOffset),
          Pointers.device(src.address() + srcOffset), bytes, stream().handle()), "cuMemcpyDtoDAsync");
    }
  }

  /** Waits for the query's queued work and reads the int at byte {@code offset} of {@code buffer}. */
  public int readInt(DeviceBuffer buffer, long offset) {
    return scratch().readInt(buffer.address() + offset, stream());
  }

  /** Waits for the query's queued work and reads the first {@code count} longs of {@code buffer}. */
  public long[] readLongs(DeviceBuffer buffer, int count) {
    return readLongs(buffer, 0, count);
  }

  /** Waits for the query's queued work and reads {@code count} longs from byte {@code offset}. */
  public long[] readLongs(DeviceBuffer buffer, long offset, int count) {
    if (8L * count <= SCRATCH_BYTES) {
      return scratch().readLongs(buffer.address() + offset, count, stream());
    }
    long[] out = new long[count];
    if (count > 0) {
      // a Java array is pageable memory: copy synchronously, after the stream's work is done
      stream().synchronize();
      Cuda.check(JCudaDriver.cuMemcpyDtoH(Pointer.to(out), Pointers.device(buffer.address() + offset),
          8L * count), "cuMemcpyDtoH");
    }
    return out;
  }

  private PinnedScratch scratch() {
    if (scratch == null) {
      scratch = gpu().newPinnedScratch(SCRATCH_BYTES);
    }
    return scratch;
  }

  @Override
  public void close() {
    try {
      if (stream != null) {
        stream.close();
      }
    } finally {
      if (scratch != null) {
        scratch.close();
      }
    }
  }
}
