package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every reduction over every type: CPU twin against a plain oracle, GPU against the CPU twin. */
class ReduceTest {
  private static final List<Nulls> NULLS = List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL);

  /** Floats may differ in the order of additions; everything else must be equal. */
  static void assertSameScalar(Object expected, Scalar actual, String what) {
    Scalar e = (Scalar) expected;
    assertEquals(e.type(), actual.type(), what + " type");
    if (e.value() instanceof Double x && actual.value() instanceof Double y && !x.equals(y)) {
      assertTrue(Math.abs(x - y) <= 1e-9 * Math.max(1, Math.max(Math.abs(x), Math.abs(y))),
          what + ": expected " + x + ", got " + y);
    } else {
      assertEquals(e.value(), actual.value(), what);
    }
  }

  private static void checkAll(Exec exec, VectorSchemaRoot root, java.util.function.Function<Integer, Column> column,
      java.util.function.BiFunction<FieldVector, Reduction, Object> expected) {
    for (int c = 0; c < root.getFieldVectors().size(); c++) {
      FieldVector v = root.getVector(c);
      for (Reduction op : Reduction.values()) {
        String what = op + "(" + v.getName() + ") over " + v.getValueCount() + " rows";
        Object want = expected.apply(v, op);
        Column col = column.apply(c);
        if (want instanceof Class<?> k) {
          assertThrows(k.asSubclass(Throwable.class), () -> Reduce.reduce(exec, col, op), what);
        } else {
          assertSameScalar(want, Reduce.reduce(exec, col, op), what);
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 200_000})
  void cpuTwinMatchesTheOracle(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : NULLS) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows * 7L + 1);
            HostTable t = HostTable.fromArrow(root)) {
          checkAll(exec, root, t::column, ReferenceReduce::expected);
        }
      }
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 200_000})
  void gpuMatchesTheCpuTwin(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 4L << 30, 256L << 20);
        Exec gpuExec = Exec.onGpu(gpu, a); Exec cpuExec = Exec.onCpu(a)) {
      for (Nulls nulls : NULLS) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows * 7L + 1);
            HostTable host = HostTable.fromArrow(root);
            DeviceTable dev = DeviceTable.fromArrow(gpu, root, gpuExec.stream())) {
          checkAll(gpuExec, root, dev::column, (v, op) -> {
            try {
              return Reduce.reduce(cpuExec, host.column(v.getName()), op);
            } catch (RuntimeException e) {
              return e.getClass();
            }
          });
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

  @Test
  void slicedInputsOnTheCpu() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = TestTables.allTypes(a, 1000, Nulls.every(3), 5)) {
      for (int[] range : new int[][] {{3, 500}, {13, 333}, {64, 65}, {999, 1}}) {
        try (VectorSchemaRoot sliced = TestTables.slice(root, range[0], range[1]); HostTable t = HostTable.fromArrow(sliced)) {
          checkAll(exec, sliced, t::column, ReferenceReduce::expected);
        }
      }
    }
  }

  @RequiresGpu
  @Test
  void slicedInputsOnTheGpu() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); VectorSchemaRoot root = TestTables.allTypes(a, 1000, Nulls.every(3), 5);
        DeviceTable whole = DeviceTable.fromArrow(gpu, root, g.stream())) {
      for (int[] range : new int[][] {{3, 500}, {13, 333}, {64, 65}, {999, 1}}) {
        try (VectorSchemaRoot sliced = TestTables.slice(root, range[0], range[1]);
            DeviceTable t = Slice.slice(g, whole, range[0], range[1])) {
          checkAll(g, sliced, t::column, ReferenceReduce::expected);
        }
      }
    }
  }

  @Test
  void integerSumOverflowIsAnErrorNotAWrap() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a); BigIntVector v = new BigIntVector("x", a)) {
      v.allocateNew(3);
      // the running sum wraps after two rows, yet the exact sum would fit: only the exact sum counts
      v.set(0, Long.MAX_VALUE);
      v.set(1, 10);
      v.set(2, -5);
      v.setValueCount(3);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v)); HostTable t = HostTable.fromArrow(root)) {
        root.setRowCount(3);
        assertThrows(dev.gpudf.columnar.error.UserException.class, () -> Reduce.reduce(exec, t.column(0), Reduction.SUM));
        v.set(1, 3);
        assertEquals(Long.MAX_VALUE - 2, Reduce.reduce(exec, t.column(0), Reduction.SUM).value());
        assertEquals(Long.MAX_VALUE, Reduce.reduce(exec, t.column(0), Reduction.MAX).value());
      }
    }
  }

  @Test
  void decimalSumsKeepTheirScale() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = TestTables.allTypes(a, 50, Nulls.NONE, 3); HostTable t = HostTable.fromArrow(root)) {
      Scalar s = Reduce.reduce(exec, t.column("dec18"), Reduction.SUM);
      assertEquals(4, ((BigDecimal) s.value()).scale());
      assertEquals(38, s.type().precision());
    }
  }
}
