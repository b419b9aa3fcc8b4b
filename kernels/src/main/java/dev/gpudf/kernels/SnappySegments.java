package dev.gpudf.kernels;

import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.UnaryOperator;

/**
 * Where the device finds the fragments of Snappy pages ({@code parquet_split_*_kernel} in {@code
 * parquet_decode.cu}), each page's input cut into segments that warps walk at once. One warp
 * walking a page's elements in order takes about 16 ns a stored byte, and a launch lasts as long
 * as its longest page: TPC-H SF10's cold q2 waited 71.8 ms on it (session 53, an H100), as the
 * supplier table's strings are a page a column of several megabytes. A segment past a page's first
 * is walked speculatively, then again from where the true chain enters it (to count its output,
 * then to place its fragments), so cutting costs up to three walks of a byte where one did; {@link
 * #segmentBytes} cuts only where the longest page, not the work spread over the device, bounds the
 * launch. The verdict and the starts are those of one warp walking the page whole ({@code
 * scripts/emulate-unsnap.sh} checks that on many blocks and segment sizes, corrupt ones included).
 */
final class SnappySegments {
  private SnappySegments() {}

  /** Fewest bytes of input a segment takes: below it the joining of segments costs more than it saves. */
  static final long MIN_SEGMENT = 16384;
  /**
   * What joining a segment's chain to the next costs (one thread reading its mark and a few
   * elements), in bytes a warp walks in that time: an estimate of about 2 us.
   */
  static final long JOIN_BYTES = 128;
  /** A segment size that leaves every page whole (one segment each). */
  static final long WHOLE = 1L << 31;
  /**
   * The bytes of a segment where set ({@code -Dgpudf.parquet.splitSegment=N}, for measurements:
   * 2147483648 leaves every page whole, one warp walking it); 0, the default: {@link
   * #segmentBytes}' choice.
   */
  static final long CONFIGURED = Long.getLong("gpudf.parquet.splitSegment", 0);
  /** Warps one multiprocessor runs at once of a kernel of one warp a block (32 blocks on sm_90). */
  static final int WARPS_PER_MULTIPROCESSOR = 32;

  /**
   * The segment size that ends the split soonest by a model of its time (in bytes one warp walks):
   * segment 0 of every page and every byte once, then twice more the other segments, each launch
   * as long as its longest segment or its work over the device's {@code warps}, and the join one
   * step a segment. {@link #WHOLE} where cutting does not pay. {@code lengths}: the stored bytes of
   * each page the device walks (0 for the others).
   */
  static long segmentBytes(long[] lengths, long warps) {
    long max = 0;
    long sum = 0;
    for (long l : lengths) {
      max = Math.max(max, l);
      sum += l;
    }
    long best = WHOLE;
    long bestCost = Math.max(max, sum / warps);
    for (long seg = MIN_SEGMENT; seg < max; seg *= 2) {
      long rest = 0;
      long segments = 0;
      for (long l : lengths) {
        if (l > seg) {
          rest += l - seg;
          segments = Math.max(segments, (l + seg - 1) / seg);
        }
      }
      long cost = Math.max(seg, sum / warps) + 2 * Math.max(seg, rest / warps) + JOIN_BYTES * segments;
      if (cost < bestCost) {
        best = seg;
        bestCost = cost;
      }
    }
    return best;
  }

  /**
   * Queues the split of the pages with a nonzero {@code lengths[p]} (their stored bytes) on {@code
   * exec}'s stream: {@code src} holds the pages ({@code srcBytes} of them), {@code table} their
   * descriptions, {@code frags} their fragments, {@code starts} each fragment's start and at
   * {@code split} each page's verdict (set to 1 where it splits), {@code status} the launch's
   * problem and count of split pages. {@code segment}: the bytes of a segment, or 0 for {@link
   * #CONFIGURED}'s or {@link #segmentBytes}' choice. The buffers it allocates go to {@code keep},
   * whose owner closes them once the stream is done with them.
   */
  static void queue(Exec exec, UnaryOperator<DeviceBuffer> keep, long segment, DeviceBuffer src, long srcBytes,
      DeviceBuffer table, long[] lengths, DeviceBuffer frags, DeviceBuffer starts, long split, DeviceBuffer status) {
    int pages = lengths.length;
    long seg = segment > 0 ? segment : CONFIGURED > 0 ? CONFIGURED
        : segmentBytes(lengths, (long) exec.stream().device().multiprocessors() * WARPS_PER_MULTIPROCESSOR);
    int[] first = new int[pages + 1];
    boolean cut = false;
    for (int p = 0; p < pages; p++) {
      long m = lengths[p] == 0 ? 0 : (lengths[p] + seg - 1) / seg;
      cut |= m > 1;
      first[p + 1] = Math.toIntExact(first[p] + m);
    }
    int segments = first[pages];
    if (segments == 0) {
      return;
    }
    int[] segs = new int[pages + 1 + segments];
    System.arraycopy(first, 0, segs, 0, pages + 1);
    for (int p = 0; p < pages; p++) {
      java.util.Arrays.fill(segs, pages + 1 + first[p], pages + 1 + first[p + 1], p);
    }
    DeviceBuffer segTable = keep.apply(exec.upload(segs));
    // per segment: where its walk stopped, its last restart, where the true chain enters it, its output
    DeviceBuffer walked = keep.apply(exec.allocateZeroed(4L * 8 * segments));
    // a bit a byte of src, for the speculative walks; two ints a page
    DeviceBuffer marks = keep.apply(exec.allocateZeroed(cut ? 4 * ((srcBytes >> 5) + 2) : 8));
    DeviceBuffer state = keep.apply(exec.allocateZeroed(8L * pages));
    ByteBuffer args = ByteBuffer.allocate(13 * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (long field : new long[] {src.address(), table.address(), segTable.address(), pages, segments, seg,
        frags.address(), starts.address(), split, walked.address(), marks.address(), state.address(),
        status.address()}) {
      args.putLong(field);
    }
    args.flip();
    var stream = exec.stream();
    KernelLaunch.launch("parquet_split_walk_kernel", segments, 32, stream, args);
    if (cut) {
      KernelLaunch.launch("parquet_split_pages_kernel", pages, 32, stream, args, 0);
      KernelLaunch.launch("parquet_split_segments_kernel", segments, 32, stream, args, 0);
      KernelLaunch.launch("parquet_split_pages_kernel", pages, 32, stream, args, 1);
      KernelLaunch.launch("parquet_split_segments_kernel", segments, 32, stream, args, 1);
      KernelLaunch.launch("parquet_split_pages_kernel", pages, 32, stream, args, 2);
    }
  }
}
