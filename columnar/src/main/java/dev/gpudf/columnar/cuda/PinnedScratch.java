package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.error.InternalException;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * A small page-locked host block from a {@link Gpu}'s pinned pool, for reading a few values (counts,
 * reduction results) back from the device: an asynchronous copy into pinned memory on the query's
 * stream and one wait, instead of a wait plus a staged pageable copy. Not thread-safe: one per query.
 * Whoever takes it from {@link Gpu#newPinnedScratch} closes it, which returns the block; closing
 * twice throws.
 */
public final class PinnedScratch implements AutoCloseable {
  private final PinnedMemoryPool pool;
  private final long address;
  private final long size;
  private boolean closed;

  PinnedScratch(PinnedMemoryPool pool, long size) {
    this.pool = pool;
    this.size = size;
    this.address = pool.allocate(size);
  }

  /** Bytes this block holds: the most one read takes. */
  public long size() {
    return size;
  }

  /**
   * Queues a copy of {@code count} longs from device address {@code src} on {@code stream}, waits for
   * the stream, and returns them.
   */
  public long[] readLongs(long src, int count, CudaStream stream) {
    long[] out = new long[count];
    if (count > 0) {
      copyIn(src, 8L * count, stream);
      for (int i = 0; i < count; i++) {
        out[i] = MemoryUtil.getLong(address + 8L * i);
      }
    }
    return out;
  }

  /** {@link #readLongs} for one int. */
  public int readInt(long src, CudaStream stream) {
    copyIn(src, 4, stream);
    return MemoryUtil.getInt(address);
  }

  private void copyIn(long src, long bytes, CudaStream stream) {
    if (closed) {
      throw new InternalException("pinned scratch used after close");
    }
    if (bytes > size) {
      throw new InternalException("reading " + bytes + " bytes through a " + size + "-byte pinned scratch");
    }
    stream.device().makeCurrent();
    check(JCudaDriver.cuMemcpyDtoHAsync(Pointers.host(address), Pointers.device(src), bytes, stream.handle()),
        "cuMemcpyDtoHAsync");
    stream.synchronize();
  }

  @Override
  public void close() {
    if (closed) {
      throw new InternalException("pinned scratch closed twice");
    }
    closed = true;
    pool.free(address, size);
  }
}
