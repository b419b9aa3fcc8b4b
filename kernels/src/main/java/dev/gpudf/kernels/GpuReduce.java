package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.cuda.DeviceBuffer;

/**
 * Launches the {@code reduce.cu} kernels: one partial result per block, which the last block to
 * finish combines on the device; the host reads back that one partial.
 */
final class GpuReduce {
  private GpuReduce() {}

  static long[] partials(Exec exec, DeviceColumn column, Reduce.Partial partial, double scale) {
    int rows = column.rowCount();
    int grid = KernelLaunch.gridFor(exec.stream().device(), rows);
    String kernel = partial.kernelPrefix + "_" + PhysicalType.of(column.type()).suffix() + "_kernel";
    long combined = 8L * partial.longs * grid;
    long ticket = combined + 8L * partial.longs;
    try (DeviceBuffer out = exec.allocate(ticket + 8)) {
      exec.zero(out, ticket, 4);
      long ticketAt = out.address() + ticket;  // passed as a raw device address
      if (partial == Reduce.Partial.MOMENTS) {
        KernelLaunch.launch(kernel, grid, exec.stream(), column.data(), column.validity(), (long) rows, scale, out, ticketAt);
      } else {
        KernelLaunch.launch(kernel, grid, exec.stream(), column.data(), column.validity(), (long) rows, out, ticketAt);
      }
      return exec.readLongs(out, combined, partial.longs);
    }
  }
}
