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

  synchronized void free(long address, long size) {
    blocks.give(address, blocks.round(size));
  }

  /** Bytes pinned by this pool. */
  synchronized long reserved() {
    return blocks.reserved();
  }

  @Override
  public synchronized void close() {
    device.makeCurrent();
    for (long[] chunk : blocks.removeAllChunks()) {
      check(JCudaDriver.cuMemFreeHost(Pointers.host(chunk[0])), "cuMemFreeHost");
    }
  }
}
