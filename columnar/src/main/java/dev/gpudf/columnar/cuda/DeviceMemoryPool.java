package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.columnar.error.QueryMemoryLimitException;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The one source of device memory for a GPU: a stream-ordered sub-allocator over large chunks
 * taken from the driver with {@code cuMemAlloc}, under a hard limit.
 *
 * <p>JCuda 12.0 has no binding for the driver's own stream-ordered pools ({@code cuMemPoolCreate},
 * {@code cuMemAllocFromPoolAsync}), so the ordering is kept here: a freed block is recorded with
 * an event on the stream that used it and becomes reusable only once that event has passed.
 * Blocks are best-fit and coalesce with free neighbours of the same chunk. Chunks grow on demand
 * up to the limit; fully free chunks go back to the driver when an allocation would otherwise
 * fail. Allocation failure throws {@link GpuOutOfMemoryException} and leaves the pool usable; an
 * allocation past its stream's own bound ({@link CudaStream#limitMemory}) throws {@link
 * QueryMemoryLimitException}.
 *
 * <p>The owner closes the pool; closing with live buffers frees the memory anyway and throws,
 * naming each leaked buffer (with its allocation stack when {@code -Dgpudf.debug.allocations=true}).
 */
public final class DeviceMemoryPool implements AutoCloseable {
  /** Every block starts on this boundary, enough for any vector load. */
  public static final long ALIGNMENT = 256;
  /** An isolated allocation's size is a multiple of this (the driver's granularity for large allocations). */
  public static final long ISOLATED_GRANULE = 2L << 20;
  private static final boolean RECORD_STACKS = Boolean.getBoolean("gpudf.debug.allocations");

  private final CudaDevice device;
  private final long limit;
  private final long chunkSize;
  private final BlockAllocator blocks = new BlockAllocator(ALIGNMENT);
  private final Map<Long, Live> live = new HashMap<>();
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  private final ArrayDeque<CudaEvent> idleEvents = new ArrayDeque<>();
  // reclaimFinished's scratch: streams whose latest pending free has passed, and those still at work
  private final List<CudaStream> doneStreams = new ArrayList<>();
  private final List<CudaStream> busyStreams = new ArrayList<>();
  // isolated allocations (allocateIsolated): address -> bytes taken from the driver
  private final Map<Long, Long> isolated = new HashMap<>();
  private long allocated;
  private long peak;
  private long allocationCount;
  private long failAt;
  private boolean closed;

  private record Live(long size, Throwable stack) {}

  // stream: the one the block was freed on, compared by identity only (it may be closed by now)
  private record Pending(long address, long size, CudaEvent event, CudaStream stream) {}

  /** Statistics of one pool, in bytes unless named otherwise. */
  public record Stats(long allocated, long peak, long reserved, long limit, long allocationCount, int liveBuffers) {}

  /**
   * A pool on {@code device} that never holds more than {@code limit} bytes, growing in chunks of
   * {@code chunkSize} (a larger request gets a chunk of its own size).
   */
  public DeviceMemoryPool(CudaDevice device, long limit, long chunkSize) {
    if (limit <= 0 || chunkSize <= 0) {
      throw new UserException("pool limit and chunk size must be positive: " + limit + ", " + chunkSize);
    }
    this.device = device;
    this.limit = limit;
    this.chunkSize = blocks.round(chunkSize);
  }

  /**
   * Allocates {@code size} bytes for use on {@code stream}. The caller owns the buffer and must
   * close it. Throws {@link GpuOutOfMemoryException} when neither the limit nor the device allow it.
   */
  public synchronized DeviceBuffer allocate(long size, CudaStream stream) {
    if (closed) {
      throw new IllegalStateException("device memory pool is closed");
    }
    if (size < 0) {
      throw new UserException("negative allocation size " + size);
    }
    if (failAt > 0 && --failAt == 0) {
      throw new GpuOutOfMemoryException(size, allocated, limit, "injected for a fault test");
    }
    long rounded = blocks.round(size);
    if (stream.memoryLimit > 0 && rounded > stream.memoryLimit - stream.memoryUsed) {
      throw QueryMemoryLimitException.device(size, stream.memoryUsed,
          stream.memoryLimit, stream.memoryLimitSource);
    }
    device.makeCurrent();
    reclaimFinished(false);
    Pending own = takeOwn(stream, rounded);
    long address;
    if (own != null) {
      // the whole block: a part left in the free list would be any stream's before its last use ended
      address = own.address();
      rounded = own.size();
    } else {
      Long free = blocks.take(rounded);
      address = free != null ? free : grow(rounded, size);
    }
    live.put(address, new Live(rounded, RECORD_STACKS ? new Throwable("allocated here") : null));
    allocated += rounded;
    stream.memoryUsed += rounded;
    peak = Math.max(peak, allocated);
    allocationCount++;
    // the buffer keeps its stream alive: its free is ordered on that stream
    stream.retain();
    return new DeviceBuffer(this::free, address, size, stream);
  }

  /**
   * {@code size} bytes in a driver allocation of their own, for memory another process maps
   * through CUDA IPC ({@link DeviceIpc}), whose handle maps a whole allocation: nothing else ever
   * lives there. The allocation is rounded up to {@link #ISOLATED_GRANULE} and zeroed (so the
   * mapping shows nothing of what the driver handed out before), counts against the limit, and
   * goes back to the driver on the buffer's last close, after its stream's work. The caller closes it.
   */
  public synchronized DeviceBuffer allocateIsolated(long size, CudaStream stream) {
    if (closed) {
      throw new IllegalStateException("device memory pool is closed");
    }
    if (size < 0) {
      throw new UserException("negative allocation size " + size);
    }
    long rounded = Math.max(1, (size + ISOLATED_GRANULE - 1) / ISOLATED_GRANULE) * ISOLATED_GRANULE;
    device.makeCurrent();
    if (rounded > limit - reserved()) {
      // what the pool holds free goes back to the driver first
      reclaimFinished(true);
      for (long[] chunk : blocks.removeEmptyChunks()) {
        check(JCudaDriver.cuMemFree(Pointers.device(chunk[0])), "cuMemFree");
      }
      if (rounded > limit - reserved()) {
        throw new GpuOutOfMemoryException(size, allocated, limit, "pool limit reached, " + reserved() + " bytes reserved");
      }
    }
    Pointers.DeviceOut out = new Pointers.DeviceOut();
    int rc = JCudaDriver.cuMemAlloc(out, rounded);
    if (rc == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
      throw new GpuOutOfMemoryException(size, allocated, limit, "the device itself is out of memory: "
          + device.memoryInfo()[0] + " bytes free");
    }
    check(rc, "cuMemAlloc");
    long address = out.address();
    try {
      check(JCudaDriver.cuMemsetD8(Pointers.device(address), (byte) 0, rounded), "cuMemsetD8");
    } catch (RuntimeException e) {
      check(JCudaDriver.cuMemFree(Pointers.device(address)), "cuMemFree");
      throw e;
    }
    isolated.put(address, rounded);
    live.put(address, new Live(rounded, RECORD_STACKS ? new Throwable("allocated here") : null));
    allocated += rounded;
    peak = Math.max(peak, allocated);
    allocationCount++;
    stream.retain();
    return new DeviceBuffer(this::freeIsolated, address, size, stream);
  }

  private synchronized void freeIsolated(long address, CudaStream stream) {
    try {
      live.remove(address);
      long size = isolated.remove(address);
      allocated -= size;
      if (!closed) {
        stream.synchronize();
        device.makeCurrent();
        check(JCudaDriver.cuMemFree(Pointers.device(address)), "cuMemFree");
      }
    } finally {
      stream.close();
    }
  }

  /** Bytes taken from the driver: the chunks and the isolated allocations. */
  private long reserved() {
    return blocks.reserved() + isolated.values().stream().mapToLong(Long::longValue).sum();
  }

  synchronized void free(long address, CudaStream stream) {
    Live l = live.remove(address);
    if (l == null) {
      throw new IllegalStateException(String.format("free of unknown device address 0x%x", address));
    }
    allocated -= l.size;
    stream.memoryUsed -= l.size;
    try {
      if (closed) {
        return;
      }
      device.makeCurrent();
      CudaEvent event = idleEvents.isEmpty() ? new CudaEvent(device, false) : idleEvents.pop();
      event.record(stream);
      pending.add(new Pending(address, l.size, event, stream));
    } finally {
      stream.close();
    }
    // keep the pending list short without blocking: most frees are long finished by the next call
    if (pending.size() > 64) {
      reclaimFinished(false);
    }
  }

  /**
   * Fault injection for tests: the {@code k}-th allocation from now fails with
   * {@link GpuOutOfMemoryException}, as if the device were full, and later ones succeed again;
   * {@code k <= 0} cancels an injection not yet reached.
   */
  public synchronized void failAllocation(long k) {
    failAt = Math.max(0, k);
  }

  /** Starts a new peak measurement at the bytes allocated now and returns the peak before it. */
  public synchronized long resetPeak() {
    long before = peak;
    peak = allocated;
    return before;
  }

  /** Statistics at this moment. */
  public synchronized Stats stats() {
    return new Stats(allocated, peak, reserved(), limit, allocationCount, live.size());
  }

  public long limit() {
    return limit;
  }

  private long grow(long rounded, long requested) {
    // Stage 1: a new chunk within the limit. Stage 2: wait for pending frees, retry the free
    // list, give empty chunks back, then a chunk of the exact size. Then a typed, retryable error.
    for (int stage = 1; stage <= 2; stage++) {
      if (stage == 2) {
        reclaimFinished(true);
        Long address = blocks.take(rounded);
        if (address != null) {
          return address;
        }
        for (long[] chunk : blocks.removeEmptyChunks()) {
          check(JCudaDriver.cuMemFree(Pointers.device(chunk[0])), "cuMemFree");
        }
      }
      long room = limit - reserved();
      if (rounded > room) {
        continue;
      }
      long want = stage == 1 ? Math.min(Math.max(rounded, chunkSize), room) : rounded;
      Pointers.DeviceOut out = new Pointers.DeviceOut();
      int rc = JCudaDriver.cuMemAlloc(out, want);
      if (rc == CUresult.CUDA_SUCCESS) {
        blocks.addChunk(out.address(), want);
        return blocks.take(rounded);
      }
      if (rc != CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
        check(rc, "cuMemAlloc");
      }
    }
    if (rounded > limit - reserved()) {
      throw new GpuOutOfMemoryException(requested, allocated, limit,
          "pool limit reached, " + blocks.reserved() + " bytes reserved in " + blocks.chunkCount() + " chunk(s)");
    }
    throw new GpuOutOfMemoryException(requested, allocated, limit,
        "the device itself is out of memory: " + device.memoryInfo()[0] + " bytes free");
  }

  /**
   * The smallest block freed on {@code stream} whose work may not be done yet that holds {@code
   * rounded} bytes without wasting more than as many again, taken out of the pending list; null if
   * none. It is safe on that stream at once (its next work is ordered after the block's last use
   * there, as the driver's own stream-ordered pools reuse memory), and on no other: so it is handed
   * out whole, never put in the free list, where another stream could take it, or a part of it,
   * while that use still runs.
   */
  private Pending takeOwn(CudaStream stream, long rounded) {
    Pending best = null;
    for (Pending p : pending) {
      // a larger block must still fit the stream's own bound, which was checked for the size asked
      boolean withinBound = stream.memoryLimit <= 0 || p.size <= stream.memoryLimit - stream.memoryUsed;
      if (p.stream == stream && p.size >= rounded && p.size <= 2 * rounded && withinBound
          && (best == null || p.size < best.size)) {
        best = p;
      }
    }
    if (best != null) {
      pending.remove(best);
      idleEvents.push(best.event);
    }
    return best;
  }

  /**
   * Gives back the pending blocks whose work is done, waiting for it with {@code wait}. A stream
   * runs its work in order, so its frees pass in the order they were recorded: first each stream's
   * latest free is asked about (newest first), and where it has passed, all that stream's blocks
   * come back without asking the driver about each; a stream still at work gives back its blocks
   * oldest first, up to its first free that has not passed. The driver is asked about each block
   * about once, not at every allocation while its stream is busy.
   */
  private void reclaimFinished(boolean wait) {
    List<CudaStream> done = doneStreams;
    List<CudaStream> busy = busyStreams;
    for (Iterator<Pending> it = pending.descendingIterator(); it.hasNext() && !wait; ) {
      Pending p = it.next();
      if (!contains(done, p.stream) && !contains(busy, p.stream)) {
        (p.event.isDone() ? done : busy).add(p.stream);
      }
    }
    for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (wait) {
        p.event.synchronize();
      } else if (!contains(done, p.stream)) {
        // a stream at work: its frees up to its first unfinished one (after that, none has passed)
        if (!contains(busy, p.stream)) {
          continue;
        }
        if (!p.event.isDone()) {
          busy.remove(p.stream);
          continue;
        }
      }
      it.remove();
      idleEvents.push(p.event);
      blocks.give(p.address, p.size);
    }
    done.clear();
    busy.clear();
  }

  /** Whether {@code streams} holds {@code stream} (by identity). */
  private static boolean contains(List<CudaStream> streams, CudaStream stream) {
    for (CudaStream s : streams) {
      if (s == stream) {
        return true;
      }
    }
    return false;
  }

  /** Frees every chunk; throws, listing them, if buffers are still live. */
  @Override
  public synchronized void close() {
    if (closed) {
      throw new IllegalStateException("device memory pool closed twice");
    }
    closed = true;
    device.synchronize();
    for (Pending p : pending) {
      idleEvents.push(p.event);
    }
    pending.clear();
    for (CudaEvent e : idleEvents) {
      e.close();
    }
    idleEvents.clear();
    for (long[] chunk : blocks.removeAllChunks()) {
      check(JCudaDriver.cuMemFree(Pointers.device(chunk[0])), "cuMemFree");
    }
    for (long address : isolated.keySet()) {
      check(JCudaDriver.cuMemFree(Pointers.device(address)), "cuMemFree");
    }
    if (!live.isEmpty()) {
      StringBuilder sb = new StringBuilder();
      long bytes = 0;
      for (Map.Entry<Long, Live> e : live.entrySet()) {
        bytes += e.getValue().size;
        sb.append(String.format("%n  0x%x (%,d bytes)", e.getKey(), e.getValue().size));
        if (e.getValue().stack != null) {
          for (StackTraceElement s : e.getValue().stack.getStackTrace()) {
            sb.append("\n      at ").append(s);
          }
        }
      }
      int n = live.size();
      live.clear();
      allocated = 0;
      throw new IllegalStateException(String.format(
          "device memory leaked: %d buffer(s), %,d bytes still allocated when the pool closed%s%s",
          n, bytes, sb, RECORD_STACKS ? "" : "\n  (run with -Dgpudf.debug.allocations=true for allocation stacks)"));
    }
  }
}
