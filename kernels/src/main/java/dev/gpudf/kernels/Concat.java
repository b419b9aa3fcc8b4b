package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;

/**
 * Concatenation: the rows of several tables with the same column types, one after the other
 * (as UNION ALL); the result takes the first table's column names.
 */
public final class Concat {
  private Concat() {}

  /** On the GPU; the caller owns the result. */
  public static DeviceTable concat(Exec exec, DeviceTable... inputs) {
    List<DeviceTable> tables = List.of(inputs);
    int rows = check(tables);
    DeviceTable first = tables.get(0);
    List<DeviceColumn> out = new ArrayList<>();
    try {
      for (int c = 0; c < first.columnCount(); c++) {
        List<DeviceColumn> parts = new ArrayList<>();
        for (DeviceTable t : tables) {
          parts.add(t.column(c));
        }
        out.add(column(exec, parts, rows));
      }
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
    return new DeviceTable(exec.gpu(), first.names(), out, rows);
  }

  private static DeviceColumn column(Exec exec, List<DeviceColumn> parts, int rows) {
    DataType type = parts.get(0).type();
    List<DeviceBuffer> owned = new ArrayList<>(3);
    try {
      DeviceBuffer data;
      DeviceBuffer offsets = null;
      if (type.id() == TypeId.BOOL) {
        data = bits(exec, parts, rows, false, owned);
      } else if (type.id() == TypeId.STRING) {
        long chars = parts.stream().mapToLong(p -> p.data().size()).sum();
        if (chars > Integer.MAX_VALUE) {
          throw new UserException("concatenated strings hold " + chars + " bytes, more than a column's 2 GiB limit");
        }
        offsets = exec.allocate(4L * (rows + 1));
        owned.add(offsets);
        data = exec.allocate(chars);
        owned.add(data);
        long row = 0;
        long at = 0;
        for (DeviceColumn p : parts) {
          // each part writes its rows + 1 offsets; the next part overwrites the shared boundary with the same value
          KernelLaunch.launch("offsets_shift_kernel", KernelLaunch.gridFor(exec.stream().device(), p.rowCount() + 1L),
              exec.stream(), p.offsets(), p.rowCount() + 1L, (int) at, offsets.address() + 4 * row);
          exec.copy(data, at, p.data(), 0, p.data().size());
          row += p.rowCount();
          at += p.data().size();
        }
      } else {
        int w = type.byteWidth();
        data = exec.allocate((long) rows * w);
        owned.add(data);
        long at = 0;
        for (DeviceColumn p : parts) {
          exec.copy(data, at, p.data(), 0, (long) p.rowCount() * w);
          at += (long) p.rowCount() * w;
        }
      }
      int nulls = parts.stream().mapToInt(DeviceColumn::nullCount).sum();
      DeviceBuffer validity = nulls == 0 ? null : bits(exec, parts, rows, true, owned);
      return new DeviceColumn(type, rows, nulls, data, offsets, validity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  private static DeviceBuffer bits(Exec exec, List<DeviceColumn> parts, int rows, boolean validity,
      List<DeviceBuffer> owned) {
    DeviceBuffer out = exec.allocate(4 * ((rows + 31L) / 32));
    owned.add(out);
    long at = 0;
    for (DeviceColumn p : parts) {
      DeviceBuffer src = validity ? p.validity() : p.data();
      KernelLaunch.launch("bits_copy_kernel", KernelLaunch.gridFor(exec.stream().device(), p.rowCount() / 32 + 2),
          exec.stream(), src, 0L, (long) p.rowCount(), out, at);
      at += p.rowCount();
    }
    return out;
  }

  /** On the CPU; the caller owns the result. */
  public static HostTable concat(Exec exec, HostTable... inputs) {
    List<HostTable> tables = List.of(inputs);
    int rows = check(tables);
    HostTable first = tables.get(0);
    BufferAllocator a = exec.allocator();
    List<HostColumn> out = new ArrayList<>();
    try {
      for (int c = 0; c < first.columnCount(); c++) {
        List<FieldVector> parts = new ArrayList<>();
        int nulls = 0;
        for (HostTable t : tables) {
          parts.add(t.column(c).vector());
          nulls += t.column(c).nullCount();
        }
        out.add(hostColumn(a, first.names().get(c), first.column(c).type(), parts, rows, nulls));
      }
    } catch (RuntimeException e) {
      out.forEach(HostColumn::close);
      throw e;
    }
    return new HostTable(first.names(), out, rows);
  }

  private static HostColumn hostColumn(BufferAllocator a, String name, DataType type, List<FieldVector> parts, int rows,
      int nulls) {
    List<ArrowBuf> bufs = new ArrayList<>(3);
    try {
      bufs.add(nulls == 0 ? a.getEmpty() : hostBits(a, parts, rows, true));
      if (type.id() == TypeId.BOOL) {
        bufs.add(hostBits(a, parts, rows, false));
      } else if (type.id() == TypeId.STRING) {
        ArrowBuf offsets = a.buffer(4L * (rows + 1));
        bufs.add(offsets);
        long chars = 0;
        long row = 0;
        for (FieldVector p : parts) {
          long so = p.getOffsetBuffer().memoryAddress();
          int base = p.getValueCount() == 0 ? 0 : MemoryUtil.getInt(so);
          for (int i = 0; i < p.getValueCount(); i++) {
            MemoryUtil.putInt(offsets.memoryAddress() + 4 * (row + i), (int) (chars + MemoryUtil.getInt(so + 4L * i) - base));
          }
          chars += p.getValueCount() == 0 ? 0 : MemoryUtil.getInt(so + 4L * p.getValueCount()) - base;
          row += p.getValueCount();
          if (chars > Integer.MAX_VALUE) {
            throw new UserException("concatenated strings hold more than a column's 2 GiB limit");
          }
        }
        MemoryUtil.putInt(offsets.memoryAddress() + 4L * rows, (int) chars);
        ArrowBuf data = a.buffer(Math.max(1, chars));
        bufs.add(data);
        long at = 0;
        for (FieldVector p : parts) {
          if (p.getValueCount() > 0) {
            long so = p.getOffsetBuffer().memoryAddress();
            int base = MemoryUtil.getInt(so);
            int len = MemoryUtil.getInt(so + 4L * p.getValueCount()) - base;
            MemoryUtil.copyMemory(p.getDataBuffer().memoryAddress() + base, data.memoryAddress() + at, len);
            at += len;
          }
        }
      } else {
        int w = CpuGather.hostWidth(parts.get(0));
        ArrowBuf data = a.buffer(Math.max(1, (long) rows * w));
        bufs.add(data);
        long at = 0;
        for (FieldVector p : parts) {
          MemoryUtil.copyMemory(p.getDataBuffer().memoryAddress(), data.memoryAddress() + at, (long) p.getValueCount() * w);
          at += (long) p.getValueCount() * w;
        }
      }
      return new HostColumn(CpuGather.load(a, name, type, rows, nulls, bufs));
    } finally {
      bufs.forEach(ArrowBuf::close);
    }
  }

  private static ArrowBuf hostBits(BufferAllocator a, List<FieldVector> parts, int rows, boolean validity) {
    ArrowBuf out = a.buffer(Math.max(8, 8 * ((rows + 63L) / 64)));
    out.setZero(0, out.capacity());
    long d = out.memoryAddress();
    long row = 0;
    for (FieldVector p : parts) {
      long s = (validity ? p.getValidityBuffer() : p.getDataBuffer()).memoryAddress();
      boolean allValid = validity && p.getNullCount() == 0;
      for (int i = 0; i < p.getValueCount(); i++, row++) {
        if (allValid || HostBitmaps.isSet(s, i)) {
          long byteAt = d + (row >>> 3);
          MemoryUtil.putByte(byteAt, (byte) (MemoryUtil.getByte(byteAt) | (1 << (row & 7))));
        }
      }
    }
    return out;
  }

  private static int check(List<? extends Table<?>> tables) {
    if (tables.isEmpty()) {
      throw new UserException("nothing to concatenate");
    }
    Table<?> first = tables.get(0);
    long rows = 0;
    for (Table<?> t : tables) {
      if (!t.types().equals(first.types())) {
        throw new UserException("cannot concatenate tables of different column types: " + first.types() + " and "
            + t.types());
      }
      rows += t.rowCount();
    }
    if (rows > Integer.MAX_VALUE) {
      throw new UserException("the concatenation has " + rows + " rows, more than a table's 2^31 - 1");
    }
    return (int) rows;
  }
}
