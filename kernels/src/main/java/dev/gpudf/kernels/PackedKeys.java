package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.StringCodes;
import java.util.List;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;

/**
 * GROUP BY keys packed into one long a row, where every key column's values fit in a few bits:
 * integers, dates, timestamps and decimals by their offset from the column's minimum (their
 * range's bits), booleans in one bit, strings of at most seven bytes as their bytes and length, and
 * a bit for NULL where a column has one. Two rows' packed keys are equal exactly when their keys
 * are (NULLs equal each other), so a grouping compares one long a row instead of each key column
 * (TPC-H q1's two one-character strings: every row's compare read both strings' offsets and bytes).
 * Floats, longer strings and keys wider than 62 bits in all are not packed: {@link #of} gives null
 * and {@link HostKeys} serves.
 */
final class PackedKeys {
  /**
   * Keys of this many bits or fewer index a table of groups directly, no hashing at all; up to
   * {@link #DIRECT_BITS_MOST} where the table is no larger than four entries a row (two one-byte
   * strings with NULLs take 18 bits).
   */
  private static final int DIRECT_BITS = 16;
  private static final int DIRECT_BITS_MOST = 20;
  private static final int MAX_BITS = 62;
  private static final int MAX_STRING = 7;
  private static final int BLOCK = 65536;

  private final long[] keys;
  private final int bits;

  private PackedKeys(long[] keys, int bits) {
    this.keys = keys;
    this.bits = bits;
  }

  /** Each row's packed key, {@link #bits()} wide. */
  long[] keys() {
    return keys;
  }

  /** How many low bits the packed keys use. */
  int bits() {
    return bits;
  }

  /** Whether the keys are few bits enough to index a table of {@code 2^}{@link #bits()} groups. */
  boolean direct() {
    return bits <= DIRECT_BITS || bits <= DIRECT_BITS_MOST && (1L << bits) <= 4L * keys.length;
  }

  /**
   * One key column's place in the packed key: from bit {@code shift}, a string's length less the
   * shortest's ({@code min}) in {@code lengthBits}, then the value's bits (a number less
   * {@code min}, a string's bytes, or the string's code where the column holds {@code codes}),
   * then the NULL bit.
   */
  private record Field(HostColumn column, PhysicalType type, long min, int valueBits, int lengthBits, boolean nullable,
      int shift, StringCodes codes) {
    Field(HostColumn column, PhysicalType type, long min, int valueBits, int lengthBits, boolean nullable, int shift) {
      this(column, type, min, valueBits, lengthBits, nullable, shift, null);
    }

    int width() {
      return valueBits + lengthBits + (nullable ? 1 : 0);
    }
  }

  /**
   * The packed keys of the {@code rows} rows of {@code columns}, or null when they do not fit (a
   * float key, a string longer than seven bytes, a range too wide). Reads each column once for its
   * range and once to pack, blocks of rows on all cores.
   */
  static PackedKeys of(Exec exec, List<HostColumn> columns, int rows) {
    Field[] fields = new Field[columns.size()];
    int shift = 0;
    for (int c = 0; c < fields.length; c++) {
      Field f = layout(exec, columns.get(c), rows, shift);
      if (f == null || shift + f.width() > MAX_BITS) {
        return null;
      }
      fields[c] = f;
      shift += f.width();
    }
    long[] keys = new long[rows];
    Exec.parallelChecked(exec::checkpoint, blocks(rows), b -> {
      int from = b * BLOCK;
      int to = Math.min(rows, from + BLOCK);
      for (Field f : fields) {
        pack(f, keys, from, to);
      }
    });
    return new PackedKeys(keys, shift);
  }

  private static int blocks(int rows) {
    return (rows + BLOCK - 1) / BLOCK;
  }

  /** The field of one column from its values' range (or strings' longest length); null when it cannot be packed. */
  private static Field layout(Exec exec, HostColumn column, int rows, int shift) {
    PhysicalType type = PhysicalType.of(column.type());
    boolean nullable = column.nullCount() > 0;
    StringCodes codes = column.codes();
    if (codes != null) {
      // strings held as canonical codes (equal codes, equal strings): the code is the key, and
      // the strings are not made
      int entries = codes.entries();
      return new Field(column, type, 0, entries <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(entries - 1), 0, nullable,
          shift, codes);
    }
    FieldVector v = column.vector();
    long valid = nullable ? v.getValidityBuffer().memoryAddress() : 0;
    long data = v.getDataBuffer().memoryAddress();
    switch (type) {
      case F32, F64 -> {
        return null;
      }
      case BITS -> {
        return new Field(column, type, 0, 1, 0, nullable, shift);
      }
      case STRING -> {
        long offsets = v.getOffsetBuffer().memoryAddress();
        int shortest = Integer.MAX_VALUE;
        int longest = 0;
        for (int i = 0; i < rows; i++) {
          int len = MemoryUtil.getInt(offsets + 4L * i + 4) - MemoryUtil.getInt(offsets + 4L * i);
          if ((len > longest || len < shortest) && (valid == 0 || HostBitmaps.isSet(valid, i))) {
            if (len > MAX_STRING) {
              return null;
            }
            longest = Math.max(longest, len);
            shortest = Math.min(shortest, len);
          }
        }
        if (shortest > longest) {
          // no valid string
          return new Field(column, type, 0, 0, 0, nullable, shift);
        }
        // the length as its offset from the shortest: none where all are as long (q1's flags)
        return new Field(column, type, shortest, 8 * longest, 32 - Integer.numberOfLeadingZeros(longest - shortest), nullable,
            shift);
      }
      default -> {
        // a DECIMAL of 18 digits or fewer reads as I64, but Arrow keeps it in 16 bytes
        int width = CpuGather.hostWidth(v);
        int blocks = blocks(rows);
        long[] mins = new long[blocks];
        long[] maxes = new long[blocks];
        boolean[] wide = new boolean[blocks];
        Exec.parallelChecked(exec::checkpoint, blocks, b -> {
          long min = Long.MAX_VALUE;
          long max = Long.MIN_VALUE;
          for (int i = b * BLOCK, to = Math.min(rows, i + BLOCK); i < to; i++) {
            if (valid != 0 && !HostBitmaps.isSet(valid, i)) {
              continue;
            }
            long x = value(type, data + (long) i * width);
            // a 128-bit decimal packs only where every value is a long
            if (type == PhysicalType.D128 && MemoryUtil.getLong(data + 16L * i + 8) != x >> 63) {
              wide[b] = true;
              return;
            }
            min = Math.min(min, x);
            max = Math.max(max, x);
          }
          mins[b] = min;
          maxes[b] = max;
        });
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int b = 0; b < blocks; b++) {
          if (wide[b]) {
            return null;
          }
          min = Math.min(min, mins[b]);
          max = Math.max(max, maxes[b]);
        }
        if (min > max) {
          // no valid value: only the NULL bit tells rows apart
          return new Field(column, type, 0, 0, 0, nullable, shift);
        }
        long range = max - min;
        if (range < 0) {
          // wider than 63 bits
          return null;
        }
        return new Field(column, type, min, 64 - Long.numberOfLeadingZeros(range), 0, nullable, shift);
      }
    }
  }

  /** The value at {@code at}: a decimal's low word, sign-extended integers otherwise. */
  private static long value(PhysicalType type, long at) {
    return switch (type) {
      case I8 -> MemoryUtil.getByte(at);
      case I16 -> MemoryUtil.getShort(at);
      case I32 -> MemoryUtil.getInt(at);
      default -> MemoryUtil.getLong(at);
    };
  }

  /**
   * ORs rows {@code [from, to)} of {@code f}'s column into their packed keys; a NULL's value bits
   * stay 0. A loop a kind of column: the client compiler, which runs a one-shot statement, neither
   * inlines nor hoists a switch a row.
   */
  private static void pack(Field f, long[] keys, int from, int to) {
    if (f.codes != null) {
      long codes = f.codes.codesAddress();
      long keep = ~(((1L << f.width()) - 1) << f.shift);
      long nullBit = 1L << (f.shift + f.valueBits);
      for (int i = from; i < to; i++) {
        int code = MemoryUtil.getInt(codes + 4L * i);
        // a NULL (code -1): its bit alone
        keys[i] = code < 0 ? keys[i] & keep | nullBit : keys[i] | (long) code << f.shift;
      }
      return;
    }
    FieldVector v = f.column.vector();
    long valid = f.nullable ? v.getValidityBuffer().memoryAddress() : 0;
    long data = v.getDataBuffer().memoryAddress();
    int shift = f.shift;
    // a NULL's slot may hold anything: every value is cut to its field's bits, so that it cannot
    // reach another column's (the NULL's own bits are set below)
    long bitsMask = (1L << (f.valueBits + f.lengthBits)) - 1;
    switch (f.type) {
      case BITS -> {
        for (int i = from; i < to; i++) {
          keys[i] |= (HostBitmaps.isSet(data, i) ? 1L : 0L) << shift;
        }
      }
      case STRING -> {
        long offsets = v.getOffsetBuffer().memoryAddress();
        int lengthBits = f.lengthBits;
        int shortest = (int) f.min;
        for (int i = from; i < to; i++) {
          int s = MemoryUtil.getInt(offsets + 4L * i);
          int len = MemoryUtil.getInt(offsets + 4L * i + 4) - s;
          if (len < 0 || len > MAX_STRING) {
            // a NULL's bytes, which its bit below overrides
            continue;
          }
          long bytes = 0;
          for (int k = 0; k < len; k++) {
            bytes |= (MemoryUtil.getByte(data + s + k) & 0xffL) << (8 * k);
          }
          keys[i] |= ((len - shortest | bytes << lengthBits) & bitsMask) << shift;
        }
      }
      case I32 -> {
        long min = f.min;
        for (int i = from; i < to; i++) {
          keys[i] |= ((MemoryUtil.getInt(data + 4L * i) - min) & bitsMask) << shift;
        }
      }
      default -> {
        long min = f.min;
        int width = CpuGather.hostWidth(v);
        for (int i = from; i < to; i++) {
          keys[i] |= ((value(f.type, data + (long) i * width) - min) & bitsMask) << shift;
        }
      }
    }
    if (valid != 0) {
      // a NULL: its bit alone, whatever bytes its slot held
      long mask = ~(((1L << f.width()) - 1) << shift);
      long nullBit = 1L << (shift + f.valueBits + f.lengthBits);
      for (int i = from; i < to; i++) {
        if (!HostBitmaps.isSet(valid, i)) {
          keys[i] = keys[i] & mask | nullBit;
        }
      }
    }
  }
}
