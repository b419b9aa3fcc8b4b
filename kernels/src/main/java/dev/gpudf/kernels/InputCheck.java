package dev.gpudf.kernels;

import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.math.BigInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;

/**
 * Checks of a column that came from outside the process as raw memory (another process's device
 * buffers, copied into gpudf's pool): every kernel trusts a column's offsets, text, digits and
 * null count, so an imported column is checked whole before it becomes a table. On the device the
 * kernels of {@code input_check.cu} run; the host path is their CPU twin (over an Arrow vector,
 * whose decimals are 16 bytes). Buffer sizes are the importer's to check: here a column's buffers
 * are taken to hold its rows.
 */
public final class InputCheck {
  private InputCheck() {}

  /** What can be wrong with a column. */
  public enum Kind {
    /** A STRING offset (position 0..rows) negative, past the data, or below the one before. */
    OFFSETS,
    /** A non-NULL STRING row that is not UTF-8. */
    UTF8,
    /** A non-NULL DECIMAL row with more digits than its precision. */
    DIGITS,
    /** The validity bitmap's count of NULL rows is not the column's (position: the bitmap's count). */
    NULL_COUNT
  }

  /** The first thing wrong with a column: its kind and position (a row, an offset's index, or a count). */
  public record Problem(Kind kind, long position) {}

  /** The first problem of {@code column} (on {@code exec}'s backend: a device column on a GPU exec), or null. */
  public static Problem find(Exec exec, Column column) {
    return column instanceof DeviceColumn d ? onDevice(exec, d) : onHost((HostColumn) column);
  }

  /** Throws a {@link UserException} naming {@code what} (a column of some input) when {@link #find} finds a problem. */
  public static void check(Exec exec, Column column, String what) {
    Problem p = find(exec, column);
    if (p == null) {
      return;
    }
    throw new UserException(what + switch (p.kind()) {
      case OFFSETS -> " has bad offsets: offset " + p.position() + " is negative, past its data, or below the one before";
      case UTF8 -> " row " + p.position() + " is not UTF-8";
      case DIGITS -> " row " + p.position() + " holds more digits than its type " + column.type() + " has";
      case NULL_COUNT -> " says it has " + column.nullCount() + " NULL rows, its validity bitmap has " + p.position();
    });
  }

  private static Problem onDevice(Exec exec, DeviceColumn c) {
    long rows = c.rowCount();
    DataType type = c.type();
    long valid = c.validity() == null ? rows : Bitmaps.countSet(exec.gpu(), c.validity(), rows, exec.stream());
    if (rows - valid != c.nullCount()) {
      return new Problem(Kind.NULL_COUNT, rows - valid);
    }
    if (type.id() == TypeId.STRING) {
      long bad = firstBad(exec, rows + 1, "check_offsets_kernel", c.offsets(), rows, c.data().size());
      if (bad >= 0) {
        return new Problem(Kind.OFFSETS, bad);
      }
      bad = firstBad(exec, rows, "check_utf8_kernel", c.offsets(), c.data(), c.validity(), rows);
      return bad >= 0 ? new Problem(Kind.UTF8, bad) : null;
    }
    if (type.id() == TypeId.DECIMAL) {
      BigInteger limit = BigInteger.TEN.pow(type.precision());
      long bad = type.isDecimal64()
          ? firstBad(exec, rows, "check_decimal64_kernel", c.data(), c.validity(), rows, limit.longValueExact())
          : firstBad(exec, rows, "check_decimal128_kernel", c.data(), c.validity(), rows, limit.longValue(),
              limit.shiftRight(64).longValue());
      return bad >= 0 ? new Problem(Kind.DIGITS, bad) : null;
    }
    return null;
  }

  /** Runs a checking kernel over {@code work} items; the first bad position it found, or -1. */
  private static long firstBad(Exec exec, long work, String kernel, Object... args) {
    try (DeviceBuffer out = exec.allocate(8)) {
      exec.fill(out, 0, 8, (byte) 0xff);
      Object[] all = java.util.Arrays.copyOf(args, args.length + 1);
      all[args.length] = out;
      if (work > 0) {
        KernelLaunch.launch(kernel, KernelLaunch.gridFor(exec.gpu().device(), work), exec.stream(), all);
      }
      // ~0 (nothing found) reads as -1
      return exec.readLongs(out, 1)[0];
    }
  }

  // ---- the CPU twin ----

  private static Problem onHost(HostColumn c) {
    FieldVector v = c.vector();
    int rows = c.rowCount();
    int nulls = HostBitmaps.nullCount(v);
    if (nulls != c.nullCount()) {
      return new Problem(Kind.NULL_COUNT, nulls);
    }
    if (c.type().id() == TypeId.STRING) {
      long address = v.getOffsetBuffer().memoryAddress();
      long dataBytes = v.getDataBuffer().capacity();
      for (int i = 0; i <= rows; i++) {
        int o = MemoryUtil.getInt(address + 4L * i);
        if (o < 0 || o > dataBytes || (i > 0 && MemoryUtil.getInt(address + 4L * (i - 1)) > o)) {
          return new Problem(Kind.OFFSETS, i);
        }
      }
      long data = v.getDataBuffer().memoryAddress();
      for (int r = 0; r < rows; r++) {
        if (!v.isNull(r) && !ArrowInput.utf8(data, MemoryUtil.getInt(address + 4L * r), MemoryUtil.getInt(address + 4L * r + 4))) {
          return new Problem(Kind.UTF8, r);
        }
      }
      return null;
    }
    if (c.type().id() == TypeId.DECIMAL) {
      BigInteger limit = BigInteger.TEN.pow(c.type().precision());
      ArrowBuf data = v.getDataBuffer();
      for (int r = 0; r < rows; r++) {
        if (!v.isNull(r) && decimal(data.memoryAddress() + 16L * r).abs().compareTo(limit) >= 0) {
          return new Problem(Kind.DIGITS, r);
        }
      }
    }
    return null;
  }

  /** The little-endian two's-complement 128-bit value at {@code address}. */
  private static BigInteger decimal(long address) {
    long low = MemoryUtil.getLong(address);
    long high = MemoryUtil.getLong(address + 8);
    return BigInteger.valueOf(high).shiftLeft(64).or(new BigInteger(Long.toUnsignedString(low)));
  }

  /**
   * {@code c} (checked) as every kernel expects a device column: a STRING's offsets from 0 and
   * its data exactly as long as its last offset; no bitmap when no row is NULL. Returns {@code c}
   * itself when it is so, else a new column (the caller closes {@code c}).
   */
  public static DeviceColumn laidOut(Exec exec, DeviceColumn c) {
    int first = 0;
    int last = 0;
    if (c.offsets() != null) {
      first = exec.readInt(c.offsets(), 0);
      last = exec.readInt(c.offsets(), 4L * c.rowCount());
    }
    boolean rebase = c.offsets() != null && (first != 0 || last != c.data().size());
    DeviceBuffer validity = c.nullCount() == 0 ? null : c.validity();
    if (!rebase && validity == c.validity()) {
      return c;
    }
    DeviceBuffer data;
    if (rebase) {
      data = exec.allocate(last - first);
      exec.copy(data, 0, c.data(), first, last - first);
      if (first != 0) {
        rebaseOffsets(exec, c.offsets(), c.rowCount(), first);
      }
    } else {
      data = c.data();
      data.retain();
    }
    if (c.offsets() != null) {
      c.offsets().retain();
    }
    if (validity != null) {
      validity.retain();
    }
    return new DeviceColumn(c.type(), c.rowCount(), c.nullCount(), data, c.offsets(), validity);
  }

  /** Queues {@code rebase_offsets_kernel}: offsets 0..rows of {@code offsets} less {@code first}. */
  private static void rebaseOffsets(Exec exec, DeviceBuffer offsets, long rows, int first) {
    KernelLaunch.launch("rebase_offsets_kernel", KernelLaunch.gridFor(exec.gpu().device(), rows + 1), exec.stream(),
        offsets, rows, first);
  }
}
