package dev.gpudf.kernels;

import static dev.gpudf.columnar.testing.TestTables.assertSameData;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Sorts: CPU twin against a boxed-value oracle; GPU permutations equal to the CPU's (both stable). */
class SortTest {
  private static final List<Nulls> NULLS = List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL);

  /** Key sets covering every type, both directions and both null placements, and multi-column keys. */
  static List<List<SortKey>> keySets(VectorSchemaRoot root) {
    List<List<SortKey>> out = new ArrayList<>();
    for (int c = 0; c < root.getFieldVectors().size(); c++) {
      out.add(List.of(SortKey.asc(c)));
      out.add(List.of(SortKey.desc(c)));
      out.add(List.of(new SortKey(c, true, true)));
    }
    int i8 = col(root, "i8");
    int bool = col(root, "bool");
    out.add(List.of(SortKey.asc(bool), SortKey.desc(col(root, "str")), SortKey.asc(col(root, "f64"))));
    out.add(List.of(SortKey.asc(i8), SortKey.asc(col(root, "dec38"))));
    out.add(List.of(SortKey.desc(bool), SortKey.asc(i8)));
    return out;
  }

  private static int col(VectorSchemaRoot root, String name) {
    return root.getFieldVectors().indexOf(root.getVector(name));
  }

  /** Row order by boxed values, the oracle. */
  static int[] oracle(VectorSchemaRoot root, List<SortKey> keys) {
    Comparator<Integer> cmp = (a, b) -> 0;
    for (SortKey k : keys) {
      FieldVector v = root.getVector(k.column());
      Comparator<Integer> one = (a, b) -> {
        Object x = v.getObject(a);
        Object y = v.getObject(b);
        if (x == null || y == null) {
          return x == y ? 0 : ((x == null) == k.nullsFirst() ? -1 : 1);
        }
        int c = compareValues(x, y);
        return k.ascending() ? c : -c;
      };
      cmp = cmp.thenComparing(one);
    }
    Integer[] rows = new Integer[root.getRowCount()];
    Arrays.setAll(rows, i -> i);
    Arrays.sort(rows, cmp); // stable
    return Arrays.stream(rows).mapToInt(Integer::intValue).toArray();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int compareValues(Object x, Object y) {
    if (x instanceof Double || x instanceof Float) {
      return CpuSort.compareFloats(((Number) x).doubleValue(), ((Number) y).doubleValue());
    }
    if (x instanceof org.apache.arrow.vector.util.Text tx) {
      byte[] a = tx.copyBytes();
      byte[] b = ((org.apache.arrow.vector.util.Text) y).copyBytes();
      return Arrays.compareUnsigned(a, b);
    }
    if (x instanceof BigDecimal bx) {
      return bx.compareTo((BigDecimal) y);
    }
    return ((Comparable) x).compareTo(y);
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 20_000})
  void cpuMatchesTheOracle(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : NULLS) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows + 11L); HostTable t = HostTable.fromArrow(root)) {
          for (List<SortKey> keys : keySets(root)) {
            int[] want = oracle(root, keys);
            try (HostColumn perm = Sort.argsort(exec, t, keys)) {
              assertArrayEquals(want, Gather.toArray(perm), keys + " " + nulls);
            }
            int limit = Math.min(rows, 7);
            try (HostTable top = Sort.topN(exec, t, keys, limit); VectorSchemaRoot got = top.toArrow(a);
                VectorSchemaRoot expected = ReferenceOps.rows(a, root, Arrays.copyOf(want, limit))) {
              assertSameData(expected, got);
            }
          }
        }
      }
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 20_000})
  void gpuMatchesTheCpuTwin(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 8L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      for (Nulls nulls : NULLS) {
        try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows + 11L); HostTable h = HostTable.fromArrow(root);
            DeviceTable d = DeviceTable.fromArrow(gpu, root, g.stream())) {
          for (List<SortKey> keys : keySets(root)) {
            int[] want = CpuSort.argsort(() -> { }, h, keys);
            try (DeviceColumn perm = Sort.argsort(g, d, keys);
                DeviceTable pt = new DeviceTable(gpu, List.of("p"), List.of(retain(perm)), rows);
                VectorSchemaRoot back = pt.toArrow(a, g.stream())) {
              assertArrayEquals(want, ints(back.getVector(0)), keys + " " + nulls + " " + rows);
            }
            // both GPU sorts, whichever argsort picks for these rows and keys
            try (DeviceBuffer radix = GpuSort.radixArgsort(g, d, keys); DeviceBuffer merge = MergeSort.argsort(g, d, keys)) {
              assertArrayEquals(want, ints(gpu, g, a, radix, rows), "radix sort by " + keys + " " + nulls + " " + rows);
              assertArrayEquals(want, ints(gpu, g, a, merge, rows), "merge sort by " + keys + " " + nulls + " " + rows);
            }
            for (int limit : new int[] {0, 1, 5, 100}) {
              int l = Math.min(limit, rows);
              try (DeviceTable top = Sort.topN(g, d, keys, l); VectorSchemaRoot got = top.toArrow(a, g.stream());
                  VectorSchemaRoot expected = ReferenceOps.rows(a, root, Arrays.copyOf(want, l))) {
                assertSameData(expected, got);
              }
            }
          }
          // the lone-column fast path and the general path must agree with the CPU
          for (String name : List.of("i32", "i64", "date", "ts_utc", "dec18", "f64", "str")) {
            try (DeviceTable one = DeviceTable.fromArrow(gpu, project(root, name), g.stream());
                HostTable hostOne = HostTable.fromArrow(project(root, name))) {
              for (SortKey k : List.of(SortKey.asc(0), SortKey.desc(0))) {
                try (DeviceTable s = Sort.sort(g, one, List.of(k)); VectorSchemaRoot got = s.toArrow(a, g.stream());
                    HostTable hs = Sort.sort(cpu, hostOne, List.of(k)); VectorSchemaRoot want = hs.toArrow(a)) {
                  assertSameData(want, got);
                }
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
  @ValueSource(ints = {1_000_003})
  void gpuMatchesTheCpuTwinOnManyRows(int rows) {
    gpuMatchesTheCpuTwin(rows);
  }

  private static VectorSchemaRoot project(VectorSchemaRoot root, String name) {
    VectorSchemaRoot r = new VectorSchemaRoot(List.of(root.getVector(name)));
    r.setRowCount(root.getRowCount());
    return r;
  }

  private static <C extends dev.gpudf.columnar.Column> C retain(C c) {
    c.retain();
    return c;
  }

  /** The first {@code rows} int32 values of {@code b}, read back to the host. */
  private static int[] ints(Gpu gpu, Exec exec, org.apache.arrow.memory.BufferAllocator a, DeviceBuffer b, int rows) {
    b.retain();
    try (DeviceTable t = new DeviceTable(gpu, List.of("p"),
        List.of(new DeviceColumn(dev.gpudf.columnar.DataType.INT32, rows, 0, b, null, null)), rows);
        VectorSchemaRoot back = t.toArrow(a, exec.stream())) {
      return ints(back.getVector(0));
    }
  }

  private static int[] ints(FieldVector v) {
    int[] out = new int[v.getValueCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ((IntVector) v).get(i);
    }
    return out;
  }

  @Test
  void slicedInputsOnTheCpu() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = TestTables.allTypes(a, 1000, Nulls.every(3), 5)) {
      for (int[] range : new int[][] {{3, 500}, {13, 333}, {64, 65}}) {
        try (VectorSchemaRoot sliced = TestTables.slice(root, range[0], range[1]); HostTable t = HostTable.fromArrow(sliced)) {
          for (List<SortKey> keys : keySets(sliced)) {
            try (HostColumn perm = Sort.argsort(exec, t, keys)) {
              assertArrayEquals(oracle(sliced, keys), Gather.toArray(perm), keys + " on rows " + Arrays.toString(range));
            }
          }
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
      for (int[] range : new int[][] {{3, 500}, {13, 333}, {64, 65}}) {
        try (VectorSchemaRoot sliced = TestTables.slice(root, range[0], range[1]);
            DeviceTable t = Slice.slice(g, whole, range[0], range[1])) {
          for (List<SortKey> keys : keySets(sliced)) {
            try (DeviceColumn perm = Sort.argsort(g, t, keys);
                DeviceTable pt = new DeviceTable(gpu, List.of("p"), List.of(retain(perm)), range[1]);
                VectorSchemaRoot back = pt.toArrow(a, g.stream())) {
              assertArrayEquals(oracle(sliced, keys), ints(back.getVector(0)), keys + " on rows " + Arrays.toString(range));
            }
          }
        }
      }
    }
  }

  @Test
  void badKeysAreUserErrors() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = TestTables.allTypes(a, 5, Nulls.NONE, 1); HostTable t = HostTable.fromArrow(root)) {
      assertThrows(UserException.class, () -> Sort.sort(exec, t, List.of()));
      assertThrows(UserException.class, () -> Sort.sort(exec, t, List.of(SortKey.asc(99))));
      assertThrows(UserException.class, () -> Sort.topN(exec, t, List.of(SortKey.asc(0)), -1));
    }
  }

  @Test
  void stringsSortByUnsignedBytesWithPrefixesFirst() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a); VarCharVector v = new VarCharVector("s", a)) {
      String[] words = {"b", "", "ab", "a", "é", "z", "a\u0000", "日本"};
      v.allocateNew();
      for (int i = 0; i < words.length; i++) {
        v.setSafe(i, words[i].getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      v.setValueCount(words.length);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v)); HostTable t = HostTable.fromArrow(root)) {
        root.setRowCount(words.length);
        try (HostColumn perm = Sort.argsort(exec, t, List.of(SortKey.asc(0)))) {
          // "", "a", "a\0", "ab", "b", "z", "é" (0xC3..), "日本" (0xE6..)
          assertArrayEquals(new int[] {1, 3, 6, 2, 0, 5, 4, 7}, Gather.toArray(perm));
        }
      }
    }
  }
}
