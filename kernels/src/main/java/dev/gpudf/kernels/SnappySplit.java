package dev.gpudf.kernels;

import org.apache.arrow.memory.ArrowBuf;

/**
 * Where each fragment of a Snappy page's output starts in its input, found on the host: the twin
 * of {@code split_fragments} in {@code parquet_decode.cu}, with the same checks, so that a page
 * walked here splits (or not) exactly as the device would have split it.
 *
 * <p>Why on the host: finding the starts is one walk over the page's element headers, in order.
 * On the device one warp walks a page, and a launch lasts as long as its longest page: on an H100,
 * with each launch timed alone, TPC-H SF10 q1's two launches over lineitem pages of up to 640 KB
 * took 61 ms (about 47 ns a stored byte), and q2's six took 202 ms, its largest pages being the
 * supplier table's strings (one row group: s_address is one page of 285 KB at SF1, and SF10 has
 * ten times its rows). A thread here walks a byte in 2-4 ns (TPC-H SF1's pages on the 2-core
 * development machine, benchmarks/results/2026-12-06-snappy-split-host-cpu-s45.txt). So a column
 * of a few large pages is walked here by the thread that read it, and a column of many pages is
 * left to the device, which walks them all at once ({@link ParquetDecode#HOST_SPLIT_RATIO}).
 */
final class SnappySplit {
  /** Bytes of a page's output a warp decompresses at once (kFragment in parquet_decode.cu). */
  static final int FRAGMENT = 65536;

  private SnappySplit() {}

  /**
   * Fills {@code starts[at .. at + n)} with where each of the {@code n} fragments of the Snappy
   * block in {@code in} (bytes {@code [from, from + inLen)}) starts, relative to {@code from}, and
   * says whether the block splits: it declares {@code outLen} bytes, makes exactly that many, and
   * every element lies inside one fragment with every copy inside its own. False otherwise (another
   * compressor's block, or a corrupt one), which the device then decodes whole and reports what is
   * wrong with; {@code starts} may then hold anything. Reads nothing outside the block, and nothing
   * at all of a block said to lie outside the buffer.
   */
  static boolean split(ArrowBuf in, long from, int inLen, int outLen, int[] starts, int at, int n) {
    if (from < 0 || inLen < 0 || from > in.capacity() - inLen) {
      return false;
    }
    int q = 0;
    long declared = 0;
    for (int shift = 0;; shift += 7) {
      if (shift >= 35 || q >= inLen) {
        return false;
      }
      int b = in.getByte(from + q++) & 0xff;
      if (shift == 28 && (b & 0x7f) > 15) {
        return false;
      }
      declared |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    if (declared != outLen) {
      return false;
    }
    starts[at] = q;
    long pos = 0;
    long frag = 0;
    int k = 1;
    // each element takes at least its tag byte, so the walk ends
    while (q < inLen) {
      int b0 = in.getByte(from + q) & 0xff;
      int type = b0 & 3;
      int head;
      long len;
      long offset = 0;
      if (type == 0) {
        head = 1;
        len = (b0 >>> 2) + 1;
        if (len > 60) {
          int extra = (int) len - 60;
          head += extra;
          if (q + head > inLen) {
            return false;
          }
          long v = 0;
          for (int i = 0; i < extra; i++) {
            v |= (long) (in.getByte(from + q + 1 + i) & 0xff) << (8 * i);
          }
          if (v >= 0x7fffffffL) {
            return false;
          }
          len = v + 1;
        }
        if (inLen - (q + head) < len) {
          return false;
        }
      } else {
        head = type == 1 ? 2 : type == 2 ? 3 : 5;
        if (q + head > inLen) {
          return false;
        }
        if (type == 1) {
          len = 4 + ((b0 >>> 2) & 7);
          offset = ((long) (b0 >>> 5) << 8) | (in.getByte(from + q + 1) & 0xff);
        } else {
          len = (b0 >>> 2) + 1;
          offset = 0;
          for (int i = 0; i < head - 1; i++) {
            offset |= (long) (in.getByte(from + q + 1 + i) & 0xff) << (8 * i);
          }
          // an offset past 2^31 is past any output, as on the device
          offset = offset > 0x7fffffffL ? 0 : offset;
        }
      }
      if (pos == (long) k * FRAGMENT) {
        if (k >= n) {
          return false;
        }
        starts[at + k] = q;
        frag = pos;
        k++;
      }
      if (type != 0 && (offset == 0 || offset > pos - frag)) {
        return false;
      }
      if (k < n && pos + len > (long) k * FRAGMENT) {
        return false;
      }
      pos += len;
      if (pos > outLen) {
        return false;
      }
      q += head + (type == 0 ? (int) len : 0);
    }
    return pos == outLen && k == n;
  }
}
