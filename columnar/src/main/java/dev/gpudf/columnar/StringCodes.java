package dev.gpudf.columnar;

import dev.gpudf.columnar.error.InternalException;
import java.util.Arrays;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;

/**
 * A string column as a dictionary and each row's code into it (a Parquet column's dictionary
 * indexes, say): the entries' UTF-8 bytes one after another with their offsets, and per row the
 * code of its entry, or -1 for NULL. The codes are <em>canonical</em>: a row's code is the first
 * entry equal to its string ({@link #firstEqual}), so two rows hold equal strings exactly when they
 * hold equal codes, and a filter or grouping may work on the codes alone. The codes (4 bytes a
 * row) are in a buffer of an Arrow allocator, which counts them; the dictionary (a fraction of the
 * rows) is on the Java heap. Owned by one holder, which closes it: {@link HostColumn#encoded}
 * makes a column of it (and closes it with the column) whose vector is made only when something
 * reads it.
 */
public final class StringCodes implements AutoCloseable {
  private final byte[] bytes;
  private final int[] offsets;
  private final ArrowBuf codes;
  private final int rows;
  private final int nulls;

  private StringCodes(byte[] bytes, int[] offsets, ArrowBuf codes, int rows, int nulls) {
    this.bytes = bytes;
    this.offsets = offsets;
    this.codes = codes;
    this.rows = rows;
    this.nulls = nulls;
  }

  /**
   * The column of {@code rows} rows whose codes (4 bytes a row, the platform's ints) are in {@code
   * codes}, {@code nulls} of them -1, over the entries {@code bytes} / {@code offsets} (entry
   * {@code e} is {@code bytes[offsets[e], offsets[e + 1])}, UTF-8 checked by the caller). Takes the
   * buffer (closed here if a check fails) and the arrays, not copied. The codes must be canonical
   * and in range, as their writer made them while it wrote each row (a decoder maps its indexes
   * through {@link #firstEqual}); one that is not is the caller's bug, not checked here: a pass of
   * its own over the rows would cost as much as writing them.
   */
  public static StringCodes of(byte[] bytes, int[] offsets, ArrowBuf codes, int rows, int nulls) {
    try {
      int entries = offsets.length - 1;
      if (entries < 0 || offsets[0] != 0 || offsets[entries] > bytes.length) {
        throw new InternalException("string dictionary offsets do not fit its " + bytes.length + " bytes");
      }
      for (int e = 0; e < entries; e++) {
        if (offsets[e] > offsets[e + 1]) {
          throw new InternalException("string dictionary offsets fall at entry " + e);
        }
      }
      if (rows < 0 || codes.capacity() < 4L * rows || nulls < 0 || nulls > rows) {
        throw new InternalException(rows + " string codes, " + nulls + " of them NULL, in a buffer of "
            + codes.capacity() + " bytes");
      }
      return new StringCodes(bytes, offsets, codes, rows, nulls);
    } catch (RuntimeException e) {
      codes.close();
      throw e;
    }
  }

  /**
   * For each entry of the dictionary {@code bytes} / {@code offsets}, the first entry whose bytes
   * equal its own: the canonical code of every row that takes it.
   */
  public static int[] firstEqual(byte[] bytes, int[] offsets) {
    int entries = offsets.length - 1;
    int[] first = new int[entries];
    java.util.Map<java.nio.ByteBuffer, Integer> seen = new java.util.HashMap<>();
    for (int e = 0; e < entries; e++) {
      Integer had = seen.putIfAbsent(java.nio.ByteBuffer.wrap(bytes, offsets[e], offsets[e + 1] - offsets[e]), e);
      first[e] = had == null ? e : had;
    }
    return first;
  }

  /** The rows. */
  public int rows() {
    return rows;
  }

  /** The rows that are NULL (code -1). */
  public int nulls() {
    return nulls;
  }

  /** The dictionary's entries (canonical codes are below this; some entries may go unused). */
  public int entries() {
    return offsets.length - 1;
  }

  /**
   * The address of the rows' canonical codes, {@link #rows()} ints: to be read, not written, while
   * this is open.
   */
  public long codesAddress() {
    return codes.memoryAddress();
  }

  /**
   * The rows {@code map} names, in that order (a negative index: a NULL row), over the same
   * dictionary, their codes from {@code allocator}; the indices are the caller's to check, and the
   * caller closes the result.
   */
  public StringCodes gather(int[] map, BufferAllocator allocator) {
    ArrowBuf out = allocator.buffer(Math.max(4, 4L * map.length));
    long from = codes.memoryAddress();
    long to = out.memoryAddress();
    int nullRows = 0;
    for (int i = 0; i < map.length; i++) {
      int c = map[i] < 0 ? -1 : MemoryUtil.getInt(from + 4L * map[i]);
      MemoryUtil.putInt(to + 4L * i, c);
      nullRows += c < 0 ? 1 : 0;
    }
    return new StringCodes(bytes, offsets, out, map.length, nullRows);
  }

  /** The entries as a column of {@link #entries()} rows and then one NULL row (for an expression over the dictionary); the caller closes it. */
  public HostColumn dictionary(BufferAllocator allocator, String name) {
    int entries = entries();
    try (ArrowBuf all = allocator.buffer(4L * (entries + 1))) {
      for (int e = 0; e < entries; e++) {
        all.setInt(4L * e, e);
      }
      all.setInt(4L * entries, -1);
      return new HostColumn(strings(allocator, ArrowTypes.toArrowField(name, DataType.STRING), all.memoryAddress(),
          entries + 1, 1));
    }
  }

  /** The rows' strings as an Arrow vector of {@code field} (a string type) from {@code allocator}; the caller owns it. */
  public FieldVector vector(BufferAllocator allocator, org.apache.arrow.vector.types.pojo.Field field) {
    return strings(allocator, field, codes.memoryAddress(), rows, nulls);
  }

  /** The strings of the {@code rows} codes at address {@code at} ({@code nulls} of them -1) as a vector of {@code field}. */
  private FieldVector strings(BufferAllocator allocator, org.apache.arrow.vector.types.pojo.Field field, long at, int rows,
      int nulls) {
    long total = 0;
    for (int r = 0; r < rows; r++) {
      int c = MemoryUtil.getInt(at + 4L * r);
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
        int c = MemoryUtil.getInt(at + 4L * r);
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
          if (MemoryUtil.getInt(at + 4L * r) >= 0) {
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

  /** Frees the codes. */
  @Override
  public void close() {
    codes.close();
  }
}
