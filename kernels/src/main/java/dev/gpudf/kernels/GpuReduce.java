package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.cuda.DeviceBuffer;

/** Launches the {@code reduce.cu} kernels: one partial result per block, read back to the host. */
final class GpuReduce {
  private GpuReduce() {}

  static long[] partials(Exec exec, DeviceColumn column, Reduce.Partial partial, double scale) {
    int rows = column.rowCount();
    int grid = KernelLaunch.gridFor(exec.stream().device(), rows);
    String kernel = partial.kernelPrefix + "_" + PhysicalType.of(column.type()).suffix() + "_kernel";
    try (DeviceBuffer out = exec.allocate(8L * partial.longs * grid)) {
      if (partial == Reduce.Partial.MOMENTS) {
        KernelLaunch.launch(kernel, grid, exec.stream(), column.data(), column.validity(), (long) rows, scale, out);
      } else {
        KernelLaunch.launch(kernel, grid, exec.stream(), column.data(), column.validity(), (long) rows, out);
      }
      return exec.readLongs(out, partial.longs * grid);
    }
  }
}
