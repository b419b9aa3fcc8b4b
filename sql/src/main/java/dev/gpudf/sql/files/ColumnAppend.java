package dev.gpudf.sql.files;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.util.VectorBatchAppender;

/**
 * Appends a checked batch's column to a chunk's column being gathered, as bulk copies of its
 * buffers: values and string bytes copied whole, validity copied by bytes where the chunk's rows
 * so far are a multiple of 8 (the batches of a Parquet file are whole row groups), string offsets
 * shifted in one loop over raw memory. Arrow's {@link VectorBatchAppender}, which did this before,
 * shifted offsets and bits through bounds-checked reads, a third of a scan's time. Types other
 * than fixed-width values and 32-bit-offset strings still go through it.
 */
final class ColumnAppend {
  private ColumnAppend() {}

  /**
   * Appends the rows of {@code in} after the first {@code at} rows of {@code out} (same type),
   * growing it as needed; the caller then sets the value count to {@code at} plus {@code in}'s.
   * {@code in} was checked ({@link dev.gpudf.columnar.ArrowInput}): its buffers hold its rows.
   */
  static void append(FieldVector out, int at, FieldVector in) {
    int n = in.getValueCount();
    if (n == 0) {
      return;
    }
    if (in.getClass() != out.getClass() || in.getValidityBuffer().capacity() < (n + 7) / 8) {
      fallback(out, at, in);
      return;
    }
    if (fixedWidth(out, in)) {
      reserve(out, at + n);
      values(out, at, in);
      validity(out, at, in);
    } else if (out instanceof BaseVariableWidthVector o) {
      BaseVariableWidthVector v = (BaseVariableWidthVector) in;
      while (o.getValueCapacity() < at + n) {
        o.reallocValidityAndOffsetBuffers();
      }
      long inOffsets = v.getOffsetBuffer().memoryAddress();
      long outOffsets = o.getOffsetBuffer().memoryAddress();
      int first = MemoryUtil.getInt(inOffsets);
      int bytes = MemoryUtil.getInt(inOffsets + 4L * n) - first;
      if (at == 0) {
        MemoryUtil.putInt(outOffsets, 0);
      }
      int base = MemoryUtil.getInt(outOffsets + 4L * at);
      if ((long) base + bytes > Integer.MAX_VALUE) {
        throw new dev.gpudf.columnar.error.UserException("a chunk's column '" + out.getName() + "' would hold more than 2 GiB of"
            + " string bytes: read it in smaller chunks (-Dgpudf.files.chunkRows)");
      }
      while (o.getDataBuffer().capacity() < (long) base + bytes) {
        o.reallocDataBuffer();
      }
      MemoryUtil.copyMemory(v.getDataBuffer().memoryAddress() + first, o.getDataBuffer().memoryAddress() + base, bytes);
      int shift = base - first;
      for (int i = 1; i <= n; i++) {
        MemoryUtil.putInt(outOffsets + 4L * (at + i), MemoryUtil.getInt(inOffsets + 4L * i) + shift);
      }
      bits(v.getValidityBuffer(), o.getValidityBuffer(), at, n);
      // the vector fills "holes" after its last set row when its count is set: there are none
      o.setLastSet(at + n - 1);
    } else {
      fallback(out, at, in);
    }
  }

  /**
   * Whether {@code in} can be appended to {@code out} in the three steps {@link #reserve}, {@link
   * #values} and {@link #validity}: both of one fixed-width class (not bits), {@code in}'s validity
   * covering its rows.
   */
  static boolean fixedWidth(FieldVector out, FieldVector in) {
    return out instanceof BaseFixedWidthVector && !(out instanceof BitVector) && in.getClass() == out.getClass()
        && in.getValidityBuffer().capacity() >= (in.getValueCount() + 7) / 8;
  }

  /** Grows {@code out} (fixed width) to hold at least {@code rows} rows, before {@link #values} copies into it. */
  static void reserve(FieldVector out, int rows) {
    while (out.getValueCapacity() < rows) {
      ((BaseFixedWidthVector) out).reAlloc();
    }
  }

  /**
   * The values of {@code in} to rows {@code at} ... of {@code out} ({@link #fixedWidth}, room
   * {@link #reserve reserved}); copies of other batches into other rows of {@code out} may run
   * at the same time.
   */
  static void values(FieldVector out, int at, FieldVector in) {
    long width = ((BaseFixedWidthVector) out).getTypeWidth();
    MemoryUtil.copyMemory(in.getDataBuffer().memoryAddress(), out.getDataBuffer().memoryAddress() + at * width,
        in.getValueCount() * width);
  }

  /**
   * The validity bits of {@code in} to rows {@code at} ... of {@code out} ({@link #fixedWidth},
   * room reserved); a column's batches in order, one at a time (bits of two batches may share a byte).
   */
  static void validity(FieldVector out, int at, FieldVector in) {
    if (in.getValueCount() > 0) {
      bits(in.getValidityBuffer(), out.getValidityBuffer(), at, in.getValueCount());
    }
  }

  /** Arrow's appender, then the bits after the new last row cleared (see {@link #bits}). */
  private static void fallback(FieldVector out, int at, FieldVector in) {
    VectorBatchAppender.batchAppend(out, in);
    int rows = at + in.getValueCount();
    if (rows % 8 != 0 && !(out instanceof BitVector)) {
      long last = out.getValidityBuffer().memoryAddress() + rows / 8;
      MemoryUtil.putByte(last, (byte) (MemoryUtil.getByte(last) & ((1 << (rows % 8)) - 1)));
    }
  }

  /**
   * Bits 0 .. n - 1 of {@code from} to bits at .. at + n - 1 of {@code to}. Bits past a chunk's
   * rows are 0 (Arrow zeroes what it allocates, and each append clears those after its last row),
   * so an append off a byte boundary ORs whole shifted bytes in: DuckDB's row groups are not all a
   * multiple of 8 rows, and a bit at a time was a third of a scan.
   */
  private static void bits(ArrowBuf from, ArrowBuf to, int at, int n) {
    long src = from.memoryAddress();
    long dst = to.memoryAddress() + (at >> 3);
    int bytes = (n + 7) / 8;
    int tail = n % 8 == 0 ? 0xff : (1 << (n % 8)) - 1;
    int shift = at & 7;
    if (shift == 0) {
      MemoryUtil.copyMemory(src, dst, bytes);
      MemoryUtil.putByte(dst + bytes - 1, (byte) (MemoryUtil.getByte(dst + bytes - 1) & tail));
      return;
    }
    for (int k = 0; k < bytes; k++) {
      int v = MemoryUtil.getByte(src + k) & (k == bytes - 1 ? tail : 0xff);
      MemoryUtil.putByte(dst + k, (byte) (MemoryUtil.getByte(dst + k) | v << shift));
      int high = v >>> (8 - shift);
      if (high != 0) {
        MemoryUtil.putByte(dst + k + 1, (byte) (MemoryUtil.getByte(dst + k + 1) | high));
      }
    }
  }
}
