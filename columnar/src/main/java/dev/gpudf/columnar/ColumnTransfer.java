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
   * Copies {@code column} into a new Arrow vector from {@code allocator} named {@code name}, and
   * waits for the copy; the caller owns the vector.
   */
  static FieldVector toHost(Gpu gpu, String name, DeviceColumn column, BufferAllocator allocator, CudaStream stream) {
    DataType type = column.type();
    int n = column.rowCount();
    List<ArrowBuf> buffers = new ArrayList<>(3);
    try {
      // Arrow's loadFieldBuffers replaces an absent validity buffer by an all-valid one.
      buffers.add(column.validity() == null
          ? allocator.getEmpty()
          : download(gpu, column.validity(), DeviceColumn.bitmapBytes(n), allocator, stream));
      if (type.id() == TypeId.BOOL) {
        buffers.add(download(gpu, column.data(), DeviceColumn.bitmapBytes(n), allocator, stream));
      } else if (type.id() == TypeId.STRING) {
        buffers.add(download(gpu, column.offsets(), 4L * (n + 1), allocator, stream));
        buffers.add(download(gpu, column.data(), column.data().size(), allocator, stream));
      } else if (type.isDecimal64()) {
        ArrowBuf wide = allocator.buffer(16L * n);
        buffers.add(wide);
        try (ArrowBuf narrow = download(gpu, column.data(), 8L * n, gpu.pinnedAllocator(), stream)) {
          stream.synchronize();
          for (long i = 0; i < n; i++) {
            long v = narrow.getLong(8 * i);
            wide.setLong(16 * i, v);
            wide.setLong(16 * i + 8, v >> 63);
          }
        }
      } else {
        buffers.add(download(gpu, column.data(), (long) n * type.byteWidth(), allocator, stream));
      }
      stream.synchronize();
      FieldVector vector = ArrowTypes.toArrowField(name, type).createVector(allocator);
      try {
        vector.loadFieldBuffers(new ArrowFieldNode(n, column.nullCount()), buffers);
      } catch (RuntimeException e) {
        vector.close();
        throw e;
      }
      return vector;
    } catch (RuntimeException e) {
      // copies already queued may still be writing into the buffers about to be released
      try {
        stream.synchronize();
      } catch (RuntimeException s) {
        e.addSuppressed(s);
      }
      throw e;
    } finally {
      // the vector holds its own references now
      buffers.forEach(ArrowBuf::close);
    }
  }

  private static ArrowBuf download(Gpu gpu, DeviceBuffer src, long bytes, BufferAllocator allocator, CudaStream stream) {
    ArrowBuf dst = allocator.buffer(Math.max(bytes, 1));
    try {
      gpu.copier().toHost(src.address(), dst.memoryAddress(), PinnedAllocationManager.isPinned(dst), bytes, stream);
    } catch (RuntimeException e) {
      dst.close();
      throw e;
    }
    return dst;
  }
}
