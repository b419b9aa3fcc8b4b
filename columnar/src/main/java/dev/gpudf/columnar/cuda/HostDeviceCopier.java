package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import java.util.stream.IntStream;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Copies between host and device memory on a stream, always by DMA from page-locked memory:
 * pinned host memory directly, pageable memory through two pinned staging slots used in turn,
 * so the host copy into one slot overlaps the DMA out of the other.
 *
 * <p>Direct (pinned) copies are asynchronous: the caller keeps the host memory alive and
 * synchronises the stream before reading it. Staged copies return once the host memory may be
 * reused (to device) or holds the data (to host). Owned by {@link Gpu}, which closes it.
 */
public final class HostDeviceCopier implements AutoCloseable {
  /** Size of each staging slot: large enough that per-chunk overhead is small against the DMA. */
  public static final long SLOT_BYTES = 32L << 20;
  /** Pieces each slot's host copy is split into, copied by parallel threads. */
  private static final int COPY_PARTS = Math.min(8, Runtime.getRuntime().availableProcessors());

  private final CudaDevice device;
  private final java.util.concurrent.atomic.AtomicLong bytesToHost = new java.util.concurrent.atomic.AtomicLong();
  private final long[] slots = new long[2];
  private final CudaEvent[] slotFree = new CudaEvent[2];

  HostDeviceCopier(CudaDevice device) {
    this.device = device;
    device.makeCurrent();
    for (int i = 0; i < 2; i++) {
      Pointers.HostOut out = new Pointers.HostOut();
      check(JCudaDriver.cuMemHostAlloc(out, SLOT_BYTES, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
      slots[i] = out.address();
      slotFree[i] = new CudaEvent(device, false);
    }
  }

  /** Copies {@code bytes} from host {@code src} to device {@code dst}; see the class note on timing. */
  public void toDevice(long src, boolean srcPinned, long dst, long bytes, CudaStream stream) {
    if (bytes == 0) {
      return;
    }
    device.makeCurrent();
    if (srcPinned) {
      check(JCudaDriver.cuMemcpyHtoDAsync(Pointers.device(dst), Pointers.host(src), bytes, stream.handle()),
          "cuMemcpyHtoDAsync");
      return;
    }
    synchronized (this) {
      boolean[] used = new boolean[2];
      for (long off = 0, i = 0; off < bytes; off += SLOT_BYTES, i++) {
        int s = (int) (i & 1);
        long n = Math.min(SLOT_BYTES, bytes - off);
        if (used[s]) {
          slotFree[s].synchronize();
        }
        hostCopy(src + off, slots[s], n);
        check(JCudaDriver.cuMemcpyHtoDAsync(Pointers.device(dst + off), Pointers.host(slots[s]), n, stream.handle()),
            "cuMemcpyHtoDAsync");
        slotFree[s].record(stream);
        used[s] = true;
      }
      for (int s = 0; s < 2; s++) {
        if (used[s]) {
          slotFree[s].synchronize();
        }
      }
    }
  }

  /** Bytes copied to the host so far, all callers together: how a caller shows that a path moved no data there. */
  public long bytesToHost() {
    return bytesToHost.get();
  }

  /** Copies {@code bytes} from device {@code src} to host {@code dst}; see the class note on timing. */
  public void toHost(long src, long dst, boolean dstPinned, long bytes, CudaStream stream) {
    if (bytes == 0) {
      return;
    }
    bytesToHost.addAndGet(bytes);
    device.makeCurrent();
    if (dstPinned) {
      check(JCudaDriver.cuMemcpyDtoHAsync(Pointers.host(dst), Pointers.device(src), bytes, stream.handle()),
          "cuMemcpyDtoHAsync");
      return;
    }
    staged(src, dst, bytes, stream);
  }

  /**
   * Copies device ranges {@code src[i]} of {@code bytes[i]} each to host {@code dst[i]} ({@code
   * dstPinned[i]}: page-locked), and returns once every one holds its data. Ranges that fit share
   * a staging slot, so a table of many small buffers (a query's result) costs the host one wait
   * instead of one per buffer.
   */
  public void toHostAll(long[] src, long[] dst, boolean[] dstPinned, long[] bytes, CudaStream stream) {
    device.makeCurrent();
    synchronized (this) {
      long[] slotAt = new long[src.length];
      int[] staged = new int[src.length];
      int pending = 0;
      long used = 0;
      for (int i = 0; i < src.length; i++) {
        if (bytes[i] == 0) {
          continue;
        }
        bytesToHost.addAndGet(bytes[i]);
        if (dstPinned[i]) {
          check(JCudaDriver.cuMemcpyDtoHAsync(Pointers.host(dst[i]), Pointers.device(src[i]), bytes[i], stream.handle()),
              "cuMemcpyDtoHAsync");
        } else if (bytes[i] > SLOT_BYTES) {
          drain(staged, pending, slotAt, dst, bytes, stream);
          pending = 0;
          used = 0;
          staged(src[i], dst[i], bytes[i], stream);
        } else {
          if (used + bytes[i] > SLOT_BYTES) {
            drain(staged, pending, slotAt, dst, bytes, stream);
            pending = 0;
            used = 0;
          }
          check(JCudaDriver.cuMemcpyDtoHAsync(Pointers.host(slots[0] + used), Pointers.device(src[i]), bytes[i],
              stream.handle()), "cuMemcpyDtoHAsync");
          slotAt[i] = used;
          staged[pending++] = i;
          used = (used + bytes[i] + 7) & ~7L;
        }
      }
      // also the wait for the direct copies, queued on the same stream before this
      drain(staged, pending, slotAt, dst, bytes, stream);
    }
  }

  /** Waits for the copies queued on {@code stream}, then moves the {@code pending} staged ranges out of slot 0. */
  private void drain(int[] staged, int pending, long[] slotAt, long[] dst, long[] bytes, CudaStream stream) {
    slotFree[0].record(stream);
    slotFree[0].synchronize();
    for (int k = 0; k < pending; k++) {
      int i = staged[k];
      MemoryUtil.copyMemory(slots[0] + slotAt[i], dst[i], bytes[i]);
    }
  }

  /** A copy to pageable host memory through both slots in turn. */
  private void staged(long src, long dst, long bytes, CudaStream stream) {
    synchronized (this) {
      long chunks = (bytes + SLOT_BYTES - 1) / SLOT_BYTES;
      // DMA of chunk i runs while the host drains chunk i-1 out of the other slot
      for (long i = 0; i <= chunks; i++) {
        if (i < chunks) {
          int s = (int) (i & 1);
          long off = i * SLOT_BYTES;
          long n = Math.min(SLOT_BYTES, bytes - off);
          check(JCudaDriver.cuMemcpyDtoHAsync(Pointers.host(slots[s]), Pointers.device(src + off), n, stream.handle()),
              "cuMemcpyDtoHAsync");
          slotFree[s].record(stream);
        }
        if (i > 0) {
          long j = i - 1;
          int s = (int) (j & 1);
          long off = j * SLOT_BYTES;
          slotFree[s].synchronize();
          hostCopy(slots[s], dst + off, Math.min(SLOT_BYTES, bytes - off));
        }
      }
    }
  }

  // One thread copies well under the DMA rate, and first touches of fresh pageable memory fault
  // page by page; several threads overlap both.
  private static void hostCopy(long src, long dst, long n) {
    if (n < (4L << 20) || COPY_PARTS == 1) {
      MemoryUtil.copyMemory(src, dst, n);
      return;
    }
    long part = (n + COPY_PARTS - 1) / COPY_PARTS;
    IntStream.range(0, COPY_PARTS).parallel().forEach(p -> {
      long off = p * part;
      if (off < n) {
        MemoryUtil.copyMemory(src + off, dst + off, Math.min(part, n - off));
      }
    });
  }

  @Override
  public synchronized void close() {
    device.makeCurrent();
    for (int i = 0; i < 2; i++) {
      slotFree[i].synchronize();
      slotFree[i].close();
      check(JCudaDriver.cuMemFreeHost(Pointers.host(slots[i])), "cuMemFreeHost");
    }
  }
}
