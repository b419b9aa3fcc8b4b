package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import jcuda.driver.JCudaDriver;

/**
 * Page-locked host memory, taken from the driver in large chunks and sub-allocated, because
 * pinning is slow (page faults plus locking, far slower than the copy it speeds up) and must not
 * be paid per buffer. Backs {@link PinnedAllocationManager}. Chunks stay until {@link #close()};
 * the limit is enforced by the Arrow allocator above this pool.
 */
final class PinnedMemoryPool implements AutoCloseable {
  private static final long ALIGNMENT = 64;
  private final CudaDevice device;
  private final long chunkSize;
  private final BlockAllocator blocks = new BlockAllocator(ALIGNMENT);
  // the bytes reserve() pins ahead of use, its thread (null when none runs), and whether closed
  private long reserveTarget;
  private Thread reserver;
  private boolean closed;

  PinnedMemoryPool(CudaDevice device, long chunkSize) {
    this.device = device;
    this.chunkSize = chunkSize;
  }

  /** A block of at least {@code size} bytes; give it back with {@link #free}. */
  synchronized long allocate(long size) {
    long rounded = blocks.round(size);
    Long address = blocks.take(rounded);
    if (address == null) {
      long want = Math.max(rounded, chunkSize);
      device.makeCurrent();
      Pointers.HostOut out = new Pointers.HostOut();
      check(JCudaDriver.cuMemHostAlloc(out, want, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
      blocks.addChunk(out.address(), want);
      address = blocks.take(rounded);
    }
    return address;
  }

  /**
   * Pins chunks ahead of use on a thread of its own until the pool holds at least {@code bytes}
   * (256 MiB a chunk: about 0.1 s each), so that the first reads do not wait for them: a cold
   * query's pages took 1.5 GiB of pinned memory, 0.6 s of pinning. Returns at once; a pool
   * already that large, or closed, pins nothing. A chunk that cannot be pinned ends it quietly:
   * allocations pin their own as before.
   */
  synchronized void reserve(long bytes) {
    reserveTarget = Math.max(reserveTarget, bytes);
    if (closed || reserver != null || blocks.reserved() >= reserveTarget) {
      return;
    }
    reserver = new Thread(this::pinUpToTarget, "gpudf-pinned-reserve");
    reserver.setDaemon(true);
    reserver.start();
  }

  private void pinUpToTarget() {
    try {
      while (true) {
        synchronized (this) {
          if (closed || blocks.reserved() >= reserveTarget) {
            return;
          }
        }
        // pinned outside the lock: allocations meanwhile go on (and pin their own if they must)
        device.makeCurrent();
        Pointers.HostOut out = new Pointers.HostOut();
        if (JCudaDriver.cuMemHostAlloc(out, chunkSize, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE) != 0) {
          return;
        }
        synchronized (this) {
          if (closed) {
            check(JCudaDriver.cuMemFreeHost(Pointers.host(out.address())), "cuMemFreeHost");
            return;
          }
          blocks.addChunk(out.address(), chunkSize);
        }
      }
    } finally {
      synchronized (this) {
        reserver = null;
        notifyAll();
      }
    }
  }

  synchronized void free(long address, long size) {
    blocks.give(address, blocks.round(size));
  }

  /** Bytes pinned by this pool. */
  synchronized long reserved() {
    return blocks.reserved();
  }

  @Override
  public synchronized void close() {
    closed = true;
    // the reserving thread ends at its next step (one chunk): wait, so that nothing it pins outlives the pool
    boolean interrupted = false;
    while (reserver != null) {
      try {
        wait();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    device.makeCurrent();
    for (long[] chunk : blocks.removeAllChunks()) {
      check(JCudaDriver.cuMemFreeHost(Pointers.host(chunk[0])), "cuMemFreeHost");
    }
  }
}
