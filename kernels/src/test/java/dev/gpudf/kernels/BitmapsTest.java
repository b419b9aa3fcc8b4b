package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The device bitmap kernels against their CPU twin, {@link HostBitmaps}. */
class BitmapsTest {

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 70_001})
  void gpuMatchesCpuOnValidityBitmaps(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        CudaStream stream = gpu.newStream()) {
      for (Nulls nulls : List.of(Nulls.every(3), Nulls.every(64), Nulls.ALL)) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows);
            DeviceTable t = DeviceTable.fromArrow(gpu, root, stream)) {
          if (rows == 0) {
            continue;
          }
          DeviceColumn c = t.column("i64");
          long cpu = HostBitmaps.countSet(root.getVector("i64").getValidityBuffer(), rows);
          assertEquals(rows - c.nullCount(), cpu, "CPU twin vs Arrow's null count");
          assertEquals(cpu, Bitmaps.countSet(gpu, c.validity(), rows, stream), nulls + ", " + rows + " rows");
          // the BOOL data bitmap too: random bits, so every word pattern occurs
          long cpuBool = HostBitmaps.countSet(root.getVector("bool").getDataBuffer(), rows);
          assertEquals(cpuBool, Bitmaps.countSet(gpu, t.column("bool").data(), rows, stream));
        }
      }
    }
  }

  /** {@link #gpuMatchesCpuOnValidityBitmaps} on millions of rows (grid-stride loops, many blocks), in the {@code gpu-heavy} suite. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {10_000_000})
  void gpuMatchesCpuOnValidityBitmapsOnManyRows(int rows) {
    gpuMatchesCpuOnValidityBitmaps(rows);
  }
}
