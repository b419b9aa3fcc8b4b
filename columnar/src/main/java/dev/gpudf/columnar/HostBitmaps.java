package dev.gpudf.columnar;

import dev.gpudf.columnar.error.UserException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Arrow validity bitmaps (LSB-first, 1 = valid) on the host. Counting reads 64-bit words, several
 * times faster than Arrow's byte-wise {@code getNullCount}, which matters on the transfer path.
 * The CPU twin of the device bitmap kernels.
 */
public final class HostBitmaps {
  private HostBitmaps() {}

  /** Set bits among the first {@code bits} bits of {@code bitmap}. */
  public static long countSet(ArrowBuf bitmap, long bits) {
    return countSet(bitmap, null, bits);
  }

  /** Positions among the first {@code bits} set in {@code a} and, unless null, in {@code b}. */
  public static long countSet(ArrowBuf a, ArrowBuf b, long bits) {
    checkBits(a, bits);
    long aa = a.memoryAddress();
    long ba = 0;
    if (b != null) {
      checkBits(b, bits);
      ba = b.memoryAddress();
    }
    long count = 0;
    long words = bits / 64;
    // bounds were checked above; ArrowBuf.getLong would check every word again
    for (long w = 0; w < words; w++) {
      count += Long.bitCount(MemoryUtil.getLong(aa + 8 * w) & (b == null ? -1L : MemoryUtil.getLong(ba + 8 * w)));
    }
    for (long i = words * 64; i < bits; i++) {
      if (isSet(aa, i) && (b == null || isSet(ba, i))) {
        count++;
      }
    }
    return count;
  }

  /** Bit {@code i} of the bitmap at native {@code address}; no bounds check. */
  public static boolean isSet(long address, long i) {
    return ((MemoryUtil.getByte(address + (i >>> 3)) >>> (i & 7)) & 1) != 0;
  }

  private static void checkBits(ArrowBuf bitmap, long bits) {
    if (bits < 0 || (bits + 7) / 8 > bitmap.capacity()) {
      throw new UserException("bitmap of " + bitmap.capacity() + " bytes cannot hold " + bits + " bits");
    }
  }

  /** Null rows of an Arrow vector, counted from its validity bitmap. */
  public static int nullCount(org.apache.arrow.vector.FieldVector vector) {
    int rows = vector.getValueCount();
    return rows == 0 ? 0 : rows - (int) countSet(vector.getValidityBuffer(), rows);
  }
}
