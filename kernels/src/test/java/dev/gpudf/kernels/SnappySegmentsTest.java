package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Where the device's split of Snappy pages cuts its walk into segments, and where it does not. */
class SnappySegmentsTest {
  /** An H100's or H200's warps at once: 132 multiprocessors. */
  private static final long WARPS = 132L * SnappySegments.WARPS_PER_MULTIPROCESSOR;

  @Test
  void oneLongPageAmongShortOnesIsCutSmall() {
    // TPC-H SF10's cold q2: a supplier column's one page of megabytes beside pages of 100 KB
    long[] lengths = new long[21];
    Arrays.fill(lengths, 100_000);
    lengths[7] = 4L << 20;
    assertEquals(SnappySegments.MIN_SEGMENT, SnappySegments.segmentBytes(lengths, WARPS));
    // fewer warps: the work spread over them bounds the launch sooner, and segments grow
    long fewer = SnappySegments.segmentBytes(lengths, 8);
    assertTrue(fewer > SnappySegments.MIN_SEGMENT && fewer < lengths[7], "segments of " + fewer);
  }

  @Test
  void manyPagesOfOneSizeStayWhole() {
    // a lineitem column at SF100: the device is busy with whole pages; cutting would only add walks
    long[] lengths = new long[2000];
    Arrays.fill(lengths, 1L << 20);
    assertEquals(SnappySegments.WHOLE, SnappySegments.segmentBytes(lengths, WARPS));
  }

  @Test
  void shortPagesOrNoneStayWhole() {
    long[] lengths = {0, SnappySegments.MIN_SEGMENT, 300, 0};
    assertEquals(SnappySegments.WHOLE, SnappySegments.segmentBytes(lengths, WARPS));
    assertEquals(SnappySegments.WHOLE, SnappySegments.segmentBytes(new long[0], WARPS));
  }
}
