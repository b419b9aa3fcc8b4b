package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceMemoryPool;
import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@RequiresGpu
class DeviceMemoryPoolTest {
  private static final long MIB = 1L << 20;
  private CudaDevice device;
  private CudaStream stream;

  @BeforeEach
  void open() {
    device = CudaDevice.open(0);
    stream = new CudaStream(device);
  }

  @AfterEach
  void close() {
    stream.close();
    device.close();
  }

  /** Queues {@code times} writes of all of {@code target} on the test's stream: device work a free can wait behind. */
  private void queueWork(DeviceBuffer target, int times) {
    for (int i = 0; i < times; i++) {
      dev.gpudf.columnar.cuda.Cuda.check(jcuda.driver.JCudaDriver.cuMemsetD8Async(target.pointer(), (byte) i, target.size(),
          stream.handle()), "cuMemsetD8Async");
    }
  }

  @Test
  void beyondTheLimitIsTypedAndThePoolStaysUsable() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 16 * MIB)) {
      DeviceBuffer kept = pool.allocate(40 * MIB, stream);
      GpuOutOfMemoryException e = assertThrows(GpuOutOfMemoryException.class, () -> pool.allocate(100 * MIB, stream));
      assertEquals(100 * MIB, e.requestedBytes());
      assertEquals(40 * MIB, e.allocatedBytes());
      assertEquals(64 * MIB, e.limitBytes());
      assertThrows(GpuOutOfMemoryException.class, () -> pool.allocate(30 * MIB, stream));
      try (DeviceBuffer next = pool.allocate(MIB, stream)) {
        assertEquals(MIB, next.size());
      }
      kept.close();
      // freed memory comes back: now 60 MiB fit where 30 did not
      try (DeviceBuffer big = pool.allocate(60 * MIB, stream)) {
        assertEquals(60 * MIB, big.size());
      }
      assertEquals(0, pool.stats().liveBuffers());
    }
  }

  /**
   * A block freed behind unfinished work is reused at once by the stream that freed it (its next
   * work is ordered after that work) and by no other stream until that work is done.
   */
  @Test
  void aFreedBlockIsReusedAtOnceOnlyOnItsOwnStream() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 4096 * MIB, 64 * MIB); CudaStream other = new CudaStream(device);
        DeviceBuffer busy = pool.allocate(1024 * MIB, stream)) {
      DeviceBuffer freed = pool.allocate(MIB, stream);
      long address = freed.address();
      // milliseconds of work queued before the free
      queueWork(busy, 20);
      freed.close();
      try (DeviceBuffer elsewhere = pool.allocate(MIB, other); DeviceBuffer same = pool.allocate(MIB, stream)) {
        assertTrue(elsewhere.address() != address, "another stream took a block whose last use had not finished");
        assertEquals(address, same.address(), "the freeing stream did not get its block back at once");
      }
      stream.synchronize();
    }
  }

  /**
   * A block freed on a stream that has finished goes back to the pool though a free before it, on
   * a stream still at work, does not: were the pool to stop at the first unfinished free of any
   * stream, the allocation below would wait for the busy stream (seen by an event, else the case is
   * retried with more work) or grow past the limit.
   */
  @Test
  void aFinishedFreeIsReclaimedBehindABusyStreamsFree() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 64 * MIB); CudaStream other = new CudaStream(device);
        CudaStream third = new CudaStream(device);
        dev.gpudf.columnar.cuda.CudaEvent done = new dev.gpudf.columnar.cuda.CudaEvent(device, false)) {
      for (int work = 20; work <= 640; work *= 2) {
        DeviceBuffer x = pool.allocate(32 * MIB, stream);
        DeviceBuffer y = pool.allocate(32 * MIB, other);
        long yAddress = y.address();
        queueWork(x, work);
        done.record(stream);
        x.close();
        y.close();
        other.synchronize();
        try (DeviceBuffer got = pool.allocate(32 * MIB, third)) {
          boolean busyDone = done.isDone();
          stream.synchronize();
          if (busyDone) {
            continue;
          }
          assertEquals(yAddress, got.address(), "the finished stream's block did not come back");
          return;
        }
      }
      throw new AssertionError("the busy stream's work always finished before the allocation: the case was never tried");
    }
  }

  /**
   * A stream's free is known done from that stream's own later free, never from another stream's:
   * a block freed behind a busy stream's work stays out of the pool after a later free on another,
   * finished stream is given back, so an allocation that needs both blocks waits for that work.
   */
  @Test
  void anotherStreamsFinishedFreeDoesNotReleaseABusyStreamsBlock() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 64 * MIB); CudaStream other = new CudaStream(device);
        CudaStream third = new CudaStream(device);
        dev.gpudf.columnar.cuda.CudaEvent done = new dev.gpudf.columnar.cuda.CudaEvent(device, false)) {
      DeviceBuffer x = pool.allocate(32 * MIB, stream);
      DeviceBuffer y = pool.allocate(32 * MIB, other);
      // milliseconds of work, then the busy stream's free, then the finished stream's
      queueWork(x, 640);
      done.record(stream);
      x.close();
      y.close();
      other.synchronize();
      try (DeviceBuffer whole = pool.allocate(64 * MIB, third)) {
        assertTrue(done.isDone(), "the busy stream's block was handed out before its work finished");
        assertEquals(64 * MIB, whole.size());
      }
    }
  }

  /**
   * A busy stream's earlier free whose work has passed comes back to every stream, and its later
   * free behind unfinished work does not: the pool gives a stream's blocks back in order up to its
   * first unfinished free (checked by an event, else the case is retried with more work).
   */
  @Test
  void aBusyStreamsFinishedFreesComeBackUpToItsFirstUnfinishedOne() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 64 * MIB); CudaStream other = new CudaStream(device);
        dev.gpudf.columnar.cuda.CudaEvent done = new dev.gpudf.columnar.cuda.CudaEvent(device, false)) {
      for (int work = 20; work <= 640; work *= 2) {
        DeviceBuffer early = pool.allocate(32 * MIB, stream);
        DeviceBuffer late = pool.allocate(32 * MIB, stream);
        long earlyAddress = early.address();
        early.close();
        stream.synchronize();
        queueWork(late, work);
        done.record(stream);
        late.close();
        try (DeviceBuffer got = pool.allocate(32 * MIB, other)) {
          if (done.isDone()) {
            stream.synchronize();
            continue;
          }
          assertEquals(earlyAddress, got.address(), "the busy stream's finished free did not come back");
          // the only room left is the unfinished block: the pool must wait for its work to hand it out
          try (DeviceBuffer rest = pool.allocate(32 * MIB, other)) {
            assertTrue(done.isDone(), "the busy stream's unfinished free was handed out before its work passed");
          }
          return;
        }
      }
      throw new AssertionError("the busy stream's work always finished before the allocation: the case was never tried");
    }
  }

  /**
   * The freeing stream taking part of its own unfinished blocks must not leave the rest to others:
   * two blocks freed behind work, the freeing stream allocating half of one, then another stream
   * allocating; while that work runs (checked by an event, else the case is retried with more
   * work), nothing the other stream gets may overlap the freed blocks. Spark's concurrent tasks on
   * the GPU failed so (misaligned and illegal addresses) when the pool put such a block in its free list.
   */
  @Test
  void anotherStreamGetsNoPartOfABlockStillInUse() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 4096 * MIB, 64 * MIB); CudaStream other = new CudaStream(device);
        DeviceBuffer busy = pool.allocate(1024 * MIB, stream);
        dev.gpudf.columnar.cuda.CudaEvent done = new dev.gpudf.columnar.cuda.CudaEvent(device, false)) {
      for (int work = 20; work <= 640; work *= 2) {
        DeviceBuffer a = pool.allocate(MIB, stream);
        DeviceBuffer b = pool.allocate(MIB, stream);
        long[] freed = {a.address(), b.address()};
        queueWork(busy, work);
        done.record(stream);
        a.close();
        b.close();
        try (DeviceBuffer half = pool.allocate(MIB / 2, stream); DeviceBuffer elsewhere = pool.allocate(MIB / 2, other);
            DeviceBuffer again = pool.allocate(MIB, other)) {
          if (done.isDone()) {
            continue;
          }
          for (DeviceBuffer got : List.of(elsewhere, again)) {
            for (long f : freed) {
              assertTrue(got.address() + got.size() <= f || got.address() >= f + MIB,
                  "another stream got memory of a block whose last use had not finished");
            }
          }
          assertTrue(half.address() == freed[0] || half.address() == freed[1], "the freeing stream did not reuse its block");
          stream.synchronize();
          return;
        }
      }
      throw new AssertionError("the queued work always finished before the other stream allocated: the case was never tried");
    }
  }

  @Test
  void statisticsTrackAllocatedPeakAndCount() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 256 * MIB, 64 * MIB)) {
      List<DeviceBuffer> bufs = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        bufs.add(pool.allocate(MIB + i, stream));
      }
      DeviceMemoryPool.Stats s = pool.stats();
      assertEquals(10, s.allocationCount());
      assertEquals(10, s.liveBuffers());
      assertTrue(s.allocated() >= 10 * MIB && s.allocated() < 11 * MIB, s.toString());
      bufs.forEach(DeviceBuffer::close);
      DeviceMemoryPool.Stats after = pool.stats();
      assertEquals(0, after.allocated());
      assertEquals(s.allocated(), after.peak());
      assertEquals(64 * MIB, after.reserved());
    }
  }

  @Test
  void blocksAreAlignedAndDisjoint() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 64 * MIB)) {
      List<DeviceBuffer> bufs = new ArrayList<>();
      for (int size : new int[] {0, 1, 255, 256, 257, 4096, 1 << 20}) {
        bufs.add(pool.allocate(size, stream));
      }
      bufs.sort((a, b) -> Long.compare(a.address(), b.address()));
      for (int i = 0; i < bufs.size(); i++) {
        assertEquals(0, bufs.get(i).address() % DeviceMemoryPool.ALIGNMENT);
        if (i > 0) {
          assertTrue(bufs.get(i - 1).address() + bufs.get(i - 1).size() <= bufs.get(i).address());
        }
      }
      bufs.forEach(DeviceBuffer::close);
    }
  }

  @Test
  void closingWithLiveBuffersReportsTheLeak() {
    DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 16 * MIB);
    DeviceBuffer leaked = pool.allocate(3 * MIB, stream);
    IllegalStateException e = assertThrows(IllegalStateException.class, pool::close);
    assertTrue(e.getMessage().contains("leaked") && e.getMessage().contains("3,145,728"), e.getMessage());
    assertTrue(e.getMessage().contains("DeviceMemoryPoolTest"), "allocation stack missing: " + e.getMessage());
    assertThrows(IllegalStateException.class, leaked::close); // the pool already reclaimed it
  }

  @Test
  void doubleCloseAndBadSizesThrow() {
    try (DeviceMemoryPool pool = new DeviceMemoryPool(device, 64 * MIB, 16 * MIB)) {
      DeviceBuffer b = pool.allocate(10, stream);
      b.close();
      assertThrows(IllegalStateException.class, b::close);
      assertThrows(UserException.class, () -> pool.allocate(-1, stream));
    }
  }
}
