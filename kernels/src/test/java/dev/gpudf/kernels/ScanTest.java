package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FloatingPointVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.BaseIntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Prefix sums: CPU twin against a running-sum oracle, GPU against the CPU twin. */
class ScanTest {
  private static final List<String> COLUMNS = List.of("i8", "i16", "i32", "f32", "f64");

  /** Compares scan outputs row by row: nulls where the input was null, sums within float rounding. */
  private static void assertScan(FieldVector input, boolean inclusive, FieldVector expectedOrNull, FieldVector actual) {
    double running = 0;
    for (int i = 0; i < input.getValueCount(); i++) {
      double x = input.isNull(i) ? 0 : input instanceof FloatingPointVector f ? f.getValueAsDouble(i)
          : ((BaseIntVector) input).getValueAsLong(i);
      double oracle = inclusive ? running + x : running;
      running += x;
      assertEquals(input.isNull(i), actual.isNull(i), "null at row " + i);
      if (!actual.isNull(i)) {
        double want = expectedOrNull != null ? ((Number) expectedOrNull.getObject(i)).doubleValue() : oracle;
        double got = ((Number) actual.getObject(i)).doubleValue();
        assertTrue(Double.compare(want, got) == 0 || Math.abs(want - got) <= 1e-6 * Math.max(1, Math.abs(want)), input.getName() + " row " + i + ": " + want + " vs " + got);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 4096, 4097, 300_001})
  void cpuMatchesRunningSums(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows); HostTable t = HostTable.fromArrow(root)) {
          for (String c : COLUMNS) {
            for (boolean inclusive : new boolean[] {true, false}) {
              try (HostColumn s = Scan.scan(exec, t.column(c), inclusive)) {
                assertScan(root.getVector(c), inclusive, null, s.vector());
              }
            }
          }
        }
      }
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 4096, 4097, 300_001})
  void gpuMatchesTheCpuTwin(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 4L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows); HostTable h = HostTable.fromArrow(root);
            DeviceTable d = DeviceTable.fromArrow(gpu, root, g.stream())) {
          for (String c : COLUMNS) {
            for (boolean inclusive : new boolean[] {true, false}) {
              try (HostColumn want = Scan.scan(cpu, h.column(c), inclusive);
                  DeviceColumn got = Scan.scan(g, d.column(c), inclusive);
                  DeviceTable gt = new DeviceTable(gpu, List.of(c), List.of(retained(got)), rows);
                  VectorSchemaRoot back = gt.toArrow(a, g.stream())) {
                assertScan(root.getVector(c), inclusive, want.vector(), back.getVector(0));
              }
            }
          }
        }
      }
    }
  }

  /** {@link #gpuMatchesTheCpuTwin} on millions of rows (grid-stride loops, many blocks), in the {@code gpu-heavy} suite. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {10_000_000})
  void gpuMatchesTheCpuTwinOnManyRows(int rows) {
    gpuMatchesTheCpuTwin(rows);
  }

  private static <C extends Column> C retained(C c) {
    c.retain();
    return c;
  }

  @Test
  void refusesWhatItCannotSumExactly() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = TestTables.allTypes(a, 100, Nulls.NONE, 1); HostTable t = HostTable.fromArrow(root)) {
      // random 64-bit values: a running sum could wrap, so it is refused instead
      assertThrows(NotSupportedException.class, () -> Scan.scan(exec, t.column("i64"), true));
      assertThrows(UserException.class, () -> Scan.scan(exec, t.column("str"), true));
      assertThrows(UserException.class, () -> Scan.scan(exec, t.column("date"), true));
    }
  }
}
