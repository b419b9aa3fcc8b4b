package dev.gpudf.columnar.cuda;

import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.BufferLedger;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.unsafe.UnsafeAllocationManager;

/**
 * Arrow memory from page-locked host memory (a {@link PinnedMemoryPool}). Arrow vectors built on
 * a {@link #newRootAllocator pinned allocator} go to and from the device by DMA at full link
 * speed with no staging copy. Arrow owns each allocation and returns it to the pool when its
 * last buffer is released.
 */
public final class PinnedAllocationManager extends AllocationManager {
  private final PinnedMemoryPool pool;
  private final long address;
  private final long size;

  private PinnedAllocationManager(BufferAllocator accountingAllocator, PinnedMemoryPool pool, long size) {
    super(accountingAllocator);
    this.pool = pool;
    this.size = size;
    this.address = pool.allocate(size);
  }

  /**
   * A root allocator whose buffers are pinned host memory from {@code pool}, at most
   * {@code limit} bytes. The caller closes it (Arrow throws there if buffers leaked) before the pool.
   */
  static RootAllocator newRootAllocator(PinnedMemoryPool pool, long limit) {
    Factory factory = new Factory() {
      @Override
      public AllocationManager create(BufferAllocator accountingAllocator, long size) {
        return new PinnedAllocationManager(accountingAllocator, pool, size);
      }

      @Override
      public ArrowBuf empty() {
        return UnsafeAllocationManager.FACTORY.empty();
      }
    };
    return new RootAllocator(RootAllocator.configBuilder().allocationManagerFactory(factory).maxAllocation(limit).build());
  }

  /** True when {@code buf} lies in memory allocated by a pinned allocator. */
  public static boolean isPinned(ArrowBuf buf) {
    return buf.getReferenceManager() instanceof BufferLedger ledger
        && ledger.getAllocationManager() instanceof PinnedAllocationManager;
  }

  @Override
  public long getSize() {
    return size;
  }

  @Override
  protected long memoryAddress() {
    return address;
  }

  @Override
  protected void release0() {
    pool.free(address, size);
  }
}
