package dev.gpudf.columnar;

import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.PinnedAllocationManager;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;

/**
 * Moves one column between an Arrow vector and device memory. Buffers go by DMA as they are;
 * the only host-side rewrites are those the device layout demands: DECIMAL of precision up to 18
 * narrows from 128 to 64 bits (and widens back), and string offsets that do not start at 0 are
 * rebased.
 */
final class ColumnTransfer {
  /** Rows a task of the decimal narrowing takes. */
  private static final int NARROW_BLOCK = 1 << 20;

  private ColumnTransfer() {}

  /**
   * Queues the copy of vector {@code v} (of gpudf type {@code type}, with {@code nullCount} nulls)
   * to the device; its buffers must live until the stream syncs.
   */
  static DeviceColumn toDevice(Gpu gpu, FieldVector v, DataType type, int nullCount, CudaStream stream) {
    int n = v.getValueCount();
    List<DeviceBuffer> owned = new ArrayList<>(3);
    try {
      DeviceBuffer validity = null;
      if (nullCount > 0) {
        validity = upload(gpu, v, v.getValidityBuffer(), 0, DeviceColumn.bitmapBytes(n), stream, owned);
      }
      DeviceBuffer offsets = null;
      DeviceBuffer data;
      if (type.id() == TypeId.BOOL) {
        data = upload(gpu, v, v.getDataBuffer(), 0, DeviceColumn.bitmapBytes(n), stream, owned);
      } else if (type.id() == TypeId.STRING) {
        ArrowBuf off = v.getOffsetBuffer();
        int start = n == 0 ? 0 : off.getInt(0);
        int end = n == 0 ? 0 : off.getInt(4L * n);
        if (start == 0 && n > 0) {
          offsets = upload(gpu, v, off, 0, 4L * (n + 1), stream, owned);
        } else {
          try (ArrowBuf rebased = gpu.pinnedAllocator().buffer(4L * (n + 1))) {
            for (int i = 0; i <= n; i++) {
              rebased.setInt(4L * i, n == 0 ? 0 : off.getInt(4L * i) - start);
            }
            offsets = upload(gpu, v, rebased, 0, 4L * (n + 1), stream, owned);
            stream.synchronize();
          }
        }
        data = upload(gpu, v, v.getDataBuffer(), start, end - start, stream, owned);
      } else if (type.isDecimal64()) {
        ArrowBuf wide = v.getDataBuffer();
        checkCapacity(v, wide, 0, 16L * n);
        try (ArrowBuf narrow = gpu.pinnedAllocator().buffer(8L * n)) {
          if (nullCount > 0) {
            checkCapacity(v, v.getValidityBuffer(), 0, DeviceColumn.bitmapBytes(n));
          }
          long valid = nullCount > 0 ? v.getValidityBuffer().memoryAddress() : 0;
          // in blocks on all cores, on raw memory (bounds checked above): one thread with ArrowBuf's
          // checks on each access took most of a file scan's upload
          Parallel.forEach((int) ((n + NARROW_BLOCK - 1) / NARROW_BLOCK), () -> { }, block ->
              narrow(v, type, wide.memoryAddress(), valid, narrow.memoryAddress(), (long) block * NARROW_BLOCK,
                  Math.min(n, (long) (block + 1) * NARROW_BLOCK)));
          data = upload(gpu, v, narrow, 0, 8L * n, stream, owned);
          stream.synchronize();
        }
      } else {
        data = upload(gpu, v, v.getDataBuffer(), 0, (long) n * type.byteWidth(), stream, owned);
      }
      return new DeviceColumn(type, n, nullCount, data, offsets, validity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  /**
   * Rows {@code from .. to - 1} of 128-bit decimals at {@code wide} as 64-bit values at {@code to64}
   * ({@code valid} the validity bitmap, 0 for none); a non-NULL value past 18 digits is a {@link
   * UserException} naming column and row.
   */
  private static void narrow(FieldVector v, DataType type, long wide, long valid, long to64, long from, long to) {
    for (long i = from; i < to; i++) {
      long lo = MemoryUtil.getLong(wide + 16 * i);
      long hi = MemoryUtil.getLong(wide + 16 * i + 8);
      // A null slot may hold anything (a CPU join fills its unmatched side with garbage).
      boolean isNull = valid != 0 && (MemoryUtil.getByte(valid + (i >> 3)) >> (i & 7) & 1) == 0;
      if (isNull) {
        lo = 0;
      } else if (hi != (lo >> 63)) {
        throw new UserException("column '" + v.getName() + "' row " + i + " holds a value outside " + type
            + " (more than 18 digits)");
      }
      MemoryUtil.putLong(to64 + 8 * i, lo);
    }
  }

  private static DeviceBuffer upload(Gpu gpu, FieldVector v, ArrowBuf src, long offset, long bytes, CudaStream stream,
      List<DeviceBuffer> owned) {
    checkCapacity(v, src, offset, bytes);
    DeviceBuffer d = gpu.allocate(bytes, stream);
    owned.add(d);
    gpu.copier().toDevice(src.memoryAddress() + offset, PinnedAllocationManager.isPinned(src), d.address(), bytes, stream);
    return d;
  }

  private static void checkCapacity(FieldVector v, ArrowBuf buf, long offset, long bytes) {
    if (bytes > 0 && offset + bytes > buf.capacity()) {
      throw new UserException("column '" + v.getName() + "': an Arrow buffer holds " + buf.capacity()
          + " bytes, fewer than the " + (offset + bytes) + " its " + v.getValueCount() + " rows need");
    }
  }

  /**
   * Copies {@code columns} into new Arrow vectors from {@code allocator}, named {@code names}, every
   * buffer of every column in one batch ({@link dev.gpudf.columnar.cuda.HostDeviceCopier#toHostAll}:
   * one wait for the whole table), and returns once they hold the data; the caller owns the vectors.
   */
  static List<FieldVector> toHost(Gpu gpu, List<String> names, List<DeviceColumn> columns, BufferAllocator allocator,
      CudaStream stream) {
    int k = columns.size();
    // per column its Arrow buffers (validity first), and the 64-bit decimals' narrow copies
    List<List<ArrowBuf>> buffers = new ArrayList<>(k);
    ArrowBuf[] narrow = new ArrowBuf[k];
    Downloads downloads = new Downloads(3 * k);
    List<FieldVector> vectors = new ArrayList<>(k);
    try {
      for (int c = 0; c < k; c++) {
        DeviceColumn column = columns.get(c);
        DataType type = column.type();
        int n = column.rowCount();
        List<ArrowBuf> own = new ArrayList<>(3);
        buffers.add(own);
        // Arrow's loadFieldBuffers replaces an absent validity buffer by an all-valid one.
        own.add(column.validity() == null ? allocator.getEmpty()
            : downloads.add(column.validity(), DeviceColumn.bitmapBytes(n), allocator));
        if (type.id() == TypeId.BOOL) {
          own.add(downloads.add(column.data(), DeviceColumn.bitmapBytes(n), allocator));
        } else if (type.id() == TypeId.STRING) {
          own.add(downloads.add(column.offsets(), 4L * (n + 1), allocator));
          own.add(downloads.add(column.data(), column.data().size(), allocator));
        } else if (type.isDecimal64()) {
          own.add(allocator.buffer(Math.max(16L * n, 1)));
          narrow[c] = downloads.add(column.data(), 8L * n, allocator);
        } else {
          own.add(downloads.add(column.data(), (long) n * type.byteWidth(), allocator));
        }
      }
      downloads.run(gpu, stream);
      for (int c = 0; c < k; c++) {
        DeviceColumn column = columns.get(c);
        int n = column.rowCount();
        if (narrow[c] != null) {
          ArrowBuf wide = buffers.get(c).get(1);
          for (long i = 0; i < n; i++) {
            long v = narrow[c].getLong(8 * i);
            wide.setLong(16 * i, v);
            wide.setLong(16 * i + 8, v >> 63);
          }
        }
        FieldVector vector = ArrowTypes.toArrowField(names.get(c), column.type()).createVector(allocator);
        vectors.add(vector);
        vector.loadFieldBuffers(new ArrowFieldNode(n, column.nullCount()), buffers.get(c));
      }
      return vectors;
    } catch (RuntimeException e) {
      vectors.forEach(FieldVector::close);
      // copies already queued may still be writing into the buffers about to be released
      try {
        stream.synchronize();
      } catch (RuntimeException s) {
        e.addSuppressed(s);
      }
      throw e;
    } finally {
      // the vectors hold their own references now
      buffers.forEach(b -> b.forEach(ArrowBuf::close));
      for (ArrowBuf b : narrow) {
        if (b != null) {
          b.close();
        }
      }
    }
  }

  /** The device-to-host copies of one table, gathered to be run as one batch. */
  private static final class Downloads {
    private final List<DeviceBuffer> src;
    private final List<ArrowBuf> dst;
    private final List<Long> bytes;

    Downloads(int expected) {
      src = new ArrayList<>(expected);
      dst = new ArrayList<>(expected);
      bytes = new ArrayList<>(expected);
    }

    /** A new host buffer that {@link #run} fills with the first {@code n} bytes of {@code from}; the caller closes it. */
    ArrowBuf add(DeviceBuffer from, long n, BufferAllocator allocator) {
      ArrowBuf to = allocator.buffer(Math.max(n, 1));
      src.add(from);
      dst.add(to);
      bytes.add(n);
      return to;
    }

    void run(Gpu gpu, CudaStream stream) {
      int k = src.size();
      long[] s = new long[k];
      long[] d = new long[k];
      boolean[] pinned = new boolean[k];
      long[] n = new long[k];
      for (int i = 0; i < k; i++) {
        s[i] = src.get(i).address();
        d[i] = dst.get(i).memoryAddress();
        pinned[i] = PinnedAllocationManager.isPinned(dst.get(i));
        n[i] = bytes.get(i);
      }
      gpu.copier().toHostAll(s, d, pinned, n, stream);
    }
  }
}
