package dev.gpudf.columnar.cuda;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The GPU backend's runtime for one device: its primary context, the device memory pool, the
 * host-device copier and a pinned host allocator for Arrow data. One per device per process is
 * the intent; whoever opens it closes it, and closing verifies that no device buffer and no
 * pinned Arrow buffer leaked.
 *
 * <p>Settings (system properties): {@code gpudf.gpu.memoryLimit} pool limit in bytes (default:
 * free device memory at open less 1 GiB of headroom for other CUDA users), {@code
 * gpudf.gpu.chunkBytes} pool growth step (default 1 GiB), {@code gpudf.gpu.pinnedLimit} pinned
 * host allocator limit (default 64 GiB).
 */
public final class Gpu implements AutoCloseable {
  private final CudaDevice device;
  private final DeviceMemoryPool pool;
  private final HostDeviceCopier copier;
  private final PinnedMemoryPool pinnedPool;
  private BufferAllocator pinnedAllocator;
  private final long pinnedLimit;

  private Gpu(CudaDevice device, long poolLimit, long chunkBytes, long pinnedLimit) {
    this.device = device;
    this.pool = new DeviceMemoryPool(device, poolLimit, chunkBytes);
    this.copier = new HostDeviceCopier(device);
    this.pinnedPool = new PinnedMemoryPool(device, 256L << 20);
    this.pinnedLimit = pinnedLimit;
  }

  /** Opens device {@code ordinal} with settings from system properties. */
  public static Gpu open(int ordinal) {
    CudaDevice device = CudaDevice.open(ordinal);
    try {
      long free = device.memoryInfo()[0];
      long limit = Long.getLong("gpudf.gpu.memoryLimit", Math.max(free - (1L << 30), free / 2));
      if (limit > free) {
        throw new UserException("gpudf.gpu.memoryLimit=" + limit + " exceeds the " + free + " bytes free on " + device);
      }
      return new Gpu(device, limit, Long.getLong("gpudf.gpu.chunkBytes", 1L << 30),
          Long.getLong("gpudf.gpu.pinnedLimit", 64L << 30));
    } catch (RuntimeException e) {
      device.close();
      throw e;
    }
  }

  /** Opens device {@code ordinal} with an explicit pool limit, for tests and benchmarks. */
  public static Gpu open(int ordinal, long poolLimit, long chunkBytes) {
    CudaDevice device = CudaDevice.open(ordinal);
    try {
      return new Gpu(device, poolLimit, chunkBytes, Long.getLong("gpudf.gpu.pinnedLimit", 64L << 30));
    } catch (RuntimeException e) {
      device.close();
      throw e;
    }
  }

  public CudaDevice device() {
    return device;
  }

  public DeviceMemoryPool pool() {
    return pool;
  }

  public HostDeviceCopier copier() {
    return copier;
  }

  /** A new stream on this device; the caller closes it. */
  public CudaStream newStream() {
    return new CudaStream(device);
  }

  /** Allocates on the pool; shorthand for {@code pool().allocate(size, stream)}. */
  public DeviceBuffer allocate(long size, CudaStream stream) {
    return pool.allocate(size, stream);
  }

  /**
   * The pinned host allocator, created on first use; owned by this Gpu. Pinned memory is pooled
   * (256 MiB chunks, kept until close). Create child allocators from it for each use so leaks
   * are attributed to their user.
   */
  public synchronized BufferAllocator pinnedAllocator() {
    if (pinnedAllocator == null) {
      pinnedAllocator = PinnedAllocationManager.newRootAllocator(pinnedPool, pinnedLimit);
    }
    return pinnedAllocator;
  }

  /**
   * Pins host memory for the pinned pool ahead of use, in the background, until it holds {@code
   * bytes} (at most the pinned limit); returns at once. For callers that know reads are coming
   * (a catalog of Parquet tables), so that a first query does not wait for pinning.
   */
  public void reservePinned(long bytes) {
    pinnedPool.reserve(Math.min(bytes, pinnedLimit));
  }

  /** Bytes of host memory the pinned pool has pinned so far (it keeps them until close: pinning is slow). */
  public long pinnedReserved() {
    return pinnedPool.reserved();
  }

  /** A {@code bytes}-byte pinned block for small read-backs, from the pinned pool; the caller closes it. */
  public PinnedScratch newPinnedScratch(long bytes) {
    return new PinnedScratch(pinnedPool, bytes);
  }

  @Override
  public void close() {
    List<RuntimeException> errors = new ArrayList<>();
    synchronized (this) {
      if (pinnedAllocator != null) {
        run(pinnedAllocator::close, errors);
      }
    }
    run(pinnedPool::close, errors);
    run(copier::close, errors);
    run(pool::close, errors);
    run(device::close, errors);
    if (!errors.isEmpty()) {
      RuntimeException first = errors.get(0);
      errors.subList(1, errors.size()).forEach(first::addSuppressed);
      throw first;
    }
  }

  private static void run(Runnable r, List<RuntimeException> errors) {
    try {
      r.run();
    } catch (RuntimeException e) {
      errors.add(e);
    }
  }

  @Override
  public String toString() {
    return "Gpu[" + device + "]";
  }
}
