package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.util.TransferPair;

/**
 * Rows {@code [offset, offset + length)} of a table as a table of its own. On the GPU the rows
 * are copied (bit ranges realigned by {@code bits_copy_kernel}); on the CPU Arrow shares the
 * buffers where the layout allows.
 */
public final class Slice {
  private Slice() {}

  /** On the GPU; the caller owns the result. */
  public static DeviceTable slice(Exec exec, DeviceTable table, int offset, int length) {
    check(table, offset, length);
    List<DeviceColumn> out = new ArrayList<>();
    try {
      for (int c = 0; c < table.columnCount(); c++) {
        out.add(column(exec, table.column(c), offset, length));
      }
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
    return new DeviceTable(exec.gpu(), table.names(), out, length);
  }

  private static DeviceColumn column(Exec exec, DeviceColumn src, int offset, int length) {
    List<DeviceBuffer> owned = new ArrayList<>(3);
    try {
      DeviceBuffer data;
      DeviceBuffer offsets = null;
      if (src.type().id() == TypeId.BOOL) {
        data = bits(exec, src.data(), offset, length, owned);
      } else if (src.type().id() == TypeId.STRING) {
        int start = exec.readInt(src.offsets(), 4L * offset);
        int end = exec.readInt(src.offsets(), 4L * (offset + length));
        offsets = exec.allocate(4L * (length + 1));
        owned.add(offsets);
        KernelLaunch.launch("offsets_shift_kernel", KernelLaunch.gridFor(exec.stream().device(), length + 1L),
            exec.stream(), src.offsets().address() + 4L * offset, length + 1L, -start, offsets);
        data = exec.allocate(end - start);
        owned.add(data);
        exec.copy(data, 0, src.data(), start, end - start);
      } else {
        int w = src.type().byteWidth();
        data = exec.allocate((long) length * w);
        owned.add(data);
        exec.copy(data, 0, src.data(), (long) offset * w, (long) length * w);
      }
      DeviceBuffer validity = null;
      int nulls = 0;
      if (src.validity() != null) {
        validity = bits(exec, src.validity(), offset, length, owned);
        nulls = length - (int) Bitmaps.countSet(exec.gpu(), validity, length, exec.stream());
      }
      return new DeviceColumn(src.type(), length, nulls, data, offsets, validity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  private static DeviceBuffer bits(Exec exec, DeviceBuffer src, int offset, int length, List<DeviceBuffer> owned) {
    DeviceBuffer out = exec.allocate(4 * ((length + 31L) / 32));
    owned.add(out);
    KernelLaunch.launch("bits_copy_kernel", KernelLaunch.gridFor(exec.stream().device(), length / 32 + 2), exec.stream(),
        src, (long) offset, (long) length, out, 0L);
    return out;
  }

  /** On the CPU, sharing buffers where Arrow can; the caller owns the result. */
  public static HostTable slice(Exec exec, HostTable table, int offset, int length) {
    check(table, offset, length);
    List<HostColumn> out = new ArrayList<>();
    try {
      for (int c = 0; c < table.columnCount(); c++) {
        FieldVector v = table.column(c).vector();
        TransferPair tp = v.getTransferPair(v.getAllocator());
        tp.splitAndTransfer(offset, length);
        out.add(new HostColumn((FieldVector) tp.getTo()));
      }
    } catch (RuntimeException e) {
      out.forEach(HostColumn::close);
      throw e;
    }
    return new HostTable(table.names(), out, length);
  }

  private static void check(Table<?> table, int offset, int length) {
    if (offset < 0 || length < 0 || (long) offset + length > table.rowCount()) {
      throw new UserException("slice [" + offset + ", " + ((long) offset + length) + ") is outside the table's "
          + table.rowCount() + " rows");
    }
  }
}
