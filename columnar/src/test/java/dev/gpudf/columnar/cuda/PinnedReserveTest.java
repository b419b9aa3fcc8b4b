package dev.gpudf.columnar.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.testing.RequiresGpu;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Gpu#reservePinned}: the pool pins ahead in the background up to what was asked, and an
 * allocation then takes those chunks rather than pinning its own; a Gpu closed while it pins
 * waits for the pinning thread to end and frees everything (closing throws on a leak).
 */
@RequiresGpu
class PinnedReserveTest {
  private static boolean reserving() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals("gpudf-pinned-reserve") && t.isAlive());
  }

  @Test
  @Timeout(30)
  void pinsAheadAndAllocationsTakeWhatWasPinned() throws Exception {
    try (Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20)) {
      assertEquals(0, gpu.pinnedReserved());
      gpu.reservePinned(768L << 20);
      while (reserving() || gpu.pinnedReserved() < 768L << 20) {
        Thread.sleep(10);
      }
      assertEquals(768L << 20, gpu.pinnedReserved(), "three chunks, no more");
      try (BufferAllocator a = gpu.pinnedAllocator().newChildAllocator("test", 0, Long.MAX_VALUE);
          ArrowBuf b = a.buffer(200L << 20); ArrowBuf c = a.buffer(200L << 20)) {
        b.setLong(0, 7);
        c.setLong(c.capacity() - 8, 9);
        assertEquals(7, b.getLong(0));
        assertEquals(768L << 20, gpu.pinnedReserved(), "allocations took the reserved chunks");
      }
    }
  }

  @Test
  @Timeout(30)
  void closingWhileItPinsWaitsForThePinning() {
    Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
    // 16 chunks: about 1.5 s of pinning, still going when the Gpu closes
    gpu.reservePinned(4L << 30);
    assertTrue(reserving());
    gpu.close();
    assertFalse(reserving(), "the pinning thread ended before close returned");
  }
}
