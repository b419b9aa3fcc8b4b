package dev.gpudf.kernels;

import java.math.BigInteger;

/**
 * Signed 192-bit accumulators of signed 128-bit values, three longs each (lo, mid, hi) in a
 * shared array: exact sums of 38-digit DECIMAL columns, which no overflow of 128 bits can
 * reach before 2^64 rows. The CPU twins sum with these; {@code reduce.cu} keeps the same layout.
 */
final class Int192 {
  private Int192() {}

  /** Adds the 128-bit value (xlo, xhi) to the accumulator at {@code acc[at..at + 2]}. */
  static void add(long[] acc, int at, long xlo, long xhi) {
    long lo = acc[at];
    long mid = acc[at + 1];
    long nlo = lo + xlo;
    long c1 = Long.compareUnsigned(nlo, lo) < 0 ? 1 : 0;
    long m = mid + xhi;
    long c2 = Long.compareUnsigned(m, mid) < 0 ? 1 : 0;
    long nmid = m + c1;
    c2 += Long.compareUnsigned(nmid, m) < 0 ? 1 : 0;
    acc[at] = nlo;
    acc[at + 1] = nmid;
    acc[at + 2] += (xhi < 0 ? -1 : 0) + c2;
  }

  /** The accumulator (lo, mid, hi) as a number. */
  static BigInteger value(long lo, long mid, long hi) {
    byte[] bytes = new byte[24];
    long[] words = {hi, mid, lo};
    for (int w = 0; w < 3; w++) {
      for (int b = 0; b < 8; b++) {
        bytes[8 * w + b] = (byte) (words[w] >>> (56 - 8 * b));
      }
    }
    return new BigInteger(bytes);
  }
}
