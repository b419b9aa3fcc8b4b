package dev.gpudf.columnar;

import dev.gpudf.columnar.error.InternalException;
import java.util.Arrays;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;

/**
 * A string column as a dictionary and each row's code into it (a Parquet column's dictionary
 * indexes, say): the entries' UTF-8 bytes one after another with their offsets, and per row the
 * code of its entry, or -1 for NULL. The codes read ({@link #codes()}) are <em>canonical</em>: equal
 * entries have one code, so two rows hold equal strings exactly when they hold equal codes, and a
 * filter or grouping may work on the codes alone. Holds the same strings from first to last, on
 * the Java heap; {@link HostColumn#encoded} makes a column of it whose vector is made only when
 * something reads it.
 */
public final class StringCodes {
  private final byte[] bytes;
  private final int[] offsets;
  private final int[] codes;
  private final int nulls;
  // whether equal entries' codes have been made one (at the first read of the codes)
  private boolean canonical;

  private StringCodes(byte[] bytes, int[] offsets, int[] codes, int nulls, boolean canonical) {
    this.bytes = bytes;
    this.offsets = offsets;
    this.codes = codes;
    this.nulls = nulls;
    this.canonical = canonical;
  }

  /**
   * The column of rows {@code codes} (each -1 or an entry) over the entries {@code bytes} /
   * {@code offsets} (entry {@code e} is {@code bytes[offsets[e], offsets[e + 1])}, UTF-8 checked
   * by the caller). The arrays are taken, not copied; a code or offset out of range is the caller's
   * bug. The codes are made canonical (a code whose entry equals an earlier entry becomes that
   * entry's code) when first read: making the strings does not need it.
   */
  public static StringCodes of(byte[] bytes, int[] offsets, int[] codes) {
    int entries = offsets.length - 1;
    if (entries < 0 || offsets[0] != 0 || offsets[entries] > bytes.length) {
      throw new InternalException("string dictionary offsets do not fit its " + bytes.length + " bytes");
    }
    for (int e = 0; e < entries; e++) {
      if (offsets[e] > offsets[e + 1]) {
        throw new InternalException("string dictionary offsets fall at entry " + e);
      }
    }
    int nulls = 0;
    for (int r = 0; r < codes.length; r++) {
      int c = codes[r];
      if (c < -1 || c >= entries) {
        throw new InternalException("string code " + c + " at row " + r + " outside a dictionary of " + entries);
      }
      nulls += c < 0 ? 1 : 0;
    }
    return new StringCodes(bytes, offsets, codes, nulls, entries <= 1);
  }

  /** Makes the codes canonical, once: each entry's code becomes the first entry equal to it. */
  private synchronized void canonicalize() {
    if (canonical) {
      return;
    }
    int entries = entries();
    int[] first = new int[entries];
    java.util.Map<java.nio.ByteBuffer, Integer> seen = new java.util.HashMap<>();
    boolean moved = false;
    for (int e = 0; e < entries; e++) {
      Integer had = seen.putIfAbsent(java.nio.ByteBuffer.wrap(bytes, offsets[e], offsets[e + 1] - offsets[e]), e);
      first[e] = had == null ? e : had;
      moved |= had != null;
    }
    if (moved) {
      for (int r = 0; r < codes.length; r++) {
        if (codes[r] >= 0) {
          codes[r] = first[codes[r]];
        }
      }
    }
    canonical = true;
  }

  /** The rows. */
  public int rows() {
    return codes.length;
  }

  /** The rows that are NULL (code -1). */
  public int nulls() {
    return nulls;
  }

  /** The dictionary's entries (canonical codes are below this; some entries may go unused). */
  public int entries() {
    return offsets.length - 1;
  }

  /** Each row's canonical code, the array itself: not to be written. */
  public int[] codes() {
    canonicalize();
    return codes;
  }

  /**
   * The rows {@code map} names, in that order (a negative index: a NULL row), over the same
   * dictionary; the indices are the caller's to check.
   */
  public StringCodes gather(int[] map) {
    canonicalize();
    int[] out = new int[map.length];
    int nullRows = 0;
    for (int i = 0; i < map.length; i++) {
      out[i] = map[i] < 0 ? -1 : codes[map[i]];
      nullRows += out[i] < 0 ? 1 : 0;
    }
    return new StringCodes(bytes, offsets, out, nullRows, true);
  }

  /** The entries as a column of {@link #entries()} rows and then one NULL row (for an expression over the dictionary); the caller closes it. */
  public HostColumn dictionary(BufferAllocator allocator, String name) {
    int[] all = new int[entries() + 1];
    for (int e = 0; e < entries(); e++) {
      all[e] = e;
    }
    all[entries()] = -1;
    return new HostColumn(new StringCodes(bytes, offsets, all, 1, false).vector(allocator,
        ArrowTypes.toArrowField(name, DataType.STRING)));
  }

  /**
   * The rows' strings as an Arrow vector of {@code field} (a string type) from {@code allocator};
   * the caller owns it. Reads the codes as they are: one made canonical meanwhile on another
   * thread names an equal entry, so the strings are the same either way.
   */
  public FieldVector vector(BufferAllocator allocator, org.apache.arrow.vector.types.pojo.Field field) {
    int rows = codes.length;
    long total = 0;
    for (int c : codes) {
      if (c >= 0) {
        total += offsets[c + 1] - offsets[c];
      }
    }
    if (total > Integer.MAX_VALUE - 8) {
      throw new dev.gpudf.columnar.error.UserException("a column of " + rows + " rows holds more than a column's 2 GiB of strings");
    }
    FieldVector made = field.createVector(allocator);
    if (!(made instanceof BaseVariableWidthVector v)) {
      made.close();
      throw new InternalException("strings from codes into a " + field.getType() + " vector");
    }
    try {
      // eight bytes of slack after the strings, and after the entries: each string is copied in
      // whole longs, the last one running past its end into bytes the next string overwrites
      v.allocateNew(total + 8, rows);
      byte[] entries = Arrays.copyOf(bytes, bytes.length + 8);
      long offsetsAt = v.getOffsetBuffer().memoryAddress();
      long data = v.getDataBuffer().memoryAddress();
      long valid = v.getValidityBuffer().memoryAddress();
      int end = 0;
      for (int r = 0; r < rows; r++) {
        MemoryUtil.putInt(offsetsAt + 4L * r, end);
        int c = codes[r];
        if (c < 0) {
          continue;
        }
        int from = offsets[c];
        int len = offsets[c + 1] - from;
        for (int k = 0; k < len; k += 8) {
          MemoryUtil.putLong(data + end + k, MemoryUtil.getLong(entries, from + k));
        }
        end += len;
      }
      MemoryUtil.putInt(offsetsAt + 4L * rows, end);
      // allocateNew cleared the validity bits: whole bytes where no row is NULL, else row by row
      if (nulls == 0) {
        MemoryUtil.setMemory(valid, rows >>> 3, (byte) -1);
        for (int r = rows & ~7; r < rows; r++) {
          MemoryUtil.putByte(valid + (r >>> 3), (byte) (MemoryUtil.getByte(valid + (r >>> 3)) | 1 << (r & 7)));
        }
      } else {
        for (int r = 0; r < rows; r++) {
          if (codes[r] >= 0) {
            MemoryUtil.putByte(valid + (r >>> 3), (byte) (MemoryUtil.getByte(valid + (r >>> 3)) | 1 << (r & 7)));
          }
        }
      }
      v.setLastSet(rows - 1);
      v.setValueCount(rows);
      return v;
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }
}
