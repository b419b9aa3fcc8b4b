package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.DeviceActivity;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** The counts a benchmark reads to say why a query is far from its roofline move with the work done. */
class DeviceActivityTest {
  @RequiresGpu
  @Test
  void countsTheLaunchesWaitsAndStreamsOfSomeDeviceWork() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20)) {
      DeviceActivity.Counts before = DeviceActivity.snapshot();
      try (Exec g = Exec.onGpu(gpu, a); VectorSchemaRoot root = TestTables.allTypes(a, 1000, TestTables.Nulls.NONE, 1000);
          DeviceTable d = DeviceTable.fromArrow(gpu, root, g.stream())) {
        DeviceActivity.Counts loaded = DeviceActivity.snapshot().since(before);
        // the table owns the scan's column
        try (DeviceTable t = new DeviceTable(gpu, List.of("s"), List.of(Scan.scan(g, d.column("i32"), true)), 1000)) {
          DeviceActivity.Counts scanned = DeviceActivity.snapshot().since(before);
          assertTrue(scanned.launches() > loaded.launches(), "a scan launches kernels: " + loaded + " then " + scanned);
          try (VectorSchemaRoot back = t.toArrow(a, g.stream())) {
            assertEquals(1000, back.getRowCount());
            DeviceActivity.Counts read = DeviceActivity.snapshot().since(before);
            assertTrue(read.waits() > scanned.waits(), "reading a result back waits for the device: " + scanned + " then " + read);
          }
        }
        assertTrue(loaded.streams() >= 1, "an Exec on the GPU makes a stream: " + loaded);
      }
    }
  }
}
