package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;


import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Grouped aggregates against a LinkedHashMap over boxed key values. */
class GroupByTest {
  private static Object key(VectorSchemaRoot r, int[] keys, int i) {
    List<Object> k = new ArrayList<>();
    for (int c : keys) {
      Object o = r.getVector(c).getObject(i);
      if (o instanceof Double d) {
        o = d.isNaN() ? "NaN" : d == 0 ? 0.0 : d;
      } else if (o instanceof Float f) {
        o = f.isNaN() ? "NaN" : f == 0 ? 0.0f : f;
      } else if (o != null && !(o instanceof Number) && !(o instanceof Boolean) && !(o instanceof BigDecimal)) {
        o = o.toString();
      }
      k.add(o);
    }
    return k;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33, 1000, 50_000})
  void matchesAMapOfGroups(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows); HostTable t = HostTable.fromArrow(r)) {
          int i8 = t.names().indexOf("i8");
          int bool = t.names().indexOf("bool");
          int str = t.names().indexOf("str");
          int i32 = t.names().indexOf("i32");
          int f64 = t.names().indexOf("f64");
          int dec = t.names().indexOf("dec18");
          for (int[] keys : new int[][] {{bool}, {str}, {bool, i8}, {str, bool}}) {
            List<GroupBy.Agg> aggs = List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0), new GroupBy.Agg(Reduction.COUNT_VALID, i32),
                new GroupBy.Agg(Reduction.SUM, i8), new GroupBy.Agg(Reduction.MIN, f64), new GroupBy.Agg(Reduction.MAX, i32),
                new GroupBy.Agg(Reduction.SUM, dec), new GroupBy.Agg(Reduction.MEAN, i8));
            List<String> names = new ArrayList<>();
            for (int k = 0; k < keys.length + aggs.size(); k++) {
              names.add("c" + k);
            }
            Map<Object, List<Integer>> groups = new LinkedHashMap<>();
            for (int i = 0; i < rows; i++) {
              groups.computeIfAbsent(key(r, keys, i), x -> new ArrayList<>()).add(i);
            }
            try (HostTable g = GroupBy.aggregate(exec, t, keys, aggs, names); VectorSchemaRoot out = g.toArrow(a)) {
              assertEquals(groups.size(), out.getRowCount());
              int gi = 0;
              for (Map.Entry<Object, List<Integer>> e : groups.entrySet()) {
                List<Integer> members = e.getValue();
                assertEquals(key(r, keys, members.get(0)), key(out, java.util.stream.IntStream.range(0, keys.length).toArray(), gi));
                FieldVector vi8 = r.getVector(i8);
                FieldVector vi32 = r.getVector(i32);
                List<Integer> validI8 = members.stream().filter(i -> !vi8.isNull(i)).toList();
                assertEquals((long) members.size(), out.getVector(keys.length).getObject(gi));
                assertEquals(members.stream().filter(i -> !vi32.isNull(i)).count(), out.getVector(keys.length + 1).getObject(gi));
                Object sum = out.getVector(keys.length + 2).getObject(gi);
                assertEquals(validI8.isEmpty() ? null : validI8.stream().mapToLong(i -> (Byte) vi8.getObject(i)).sum(), sum);
                Object max = out.getVector(keys.length + 4).getObject(gi);
                assertEquals(members.stream().filter(i -> !vi32.isNull(i)).map(i -> (Integer) vi32.getObject(i))
                    .max(Integer::compare).orElse(null), max);
                Object decSum = out.getVector(keys.length + 5).getObject(gi);
                FieldVector vd = r.getVector(dec);
                List<BigDecimal> ds = members.stream().filter(i -> !vd.isNull(i)).map(i -> (BigDecimal) vd.getObject(i)).toList();
                if (ds.isEmpty()) {
                  assertEquals(null, decSum);
                } else {
                  assertEquals(0, ds.stream().reduce(BigDecimal.ZERO, BigDecimal::add).compareTo((BigDecimal) decSum));
                }
                Object mean = out.getVector(keys.length + 6).getObject(gi);
                if (validI8.isEmpty()) {
                  assertEquals(null, mean);
                } else {
                  double want = validI8.stream().mapToLong(i -> (Byte) vi8.getObject(i)).average().orElseThrow();
                  assertEquals(want, (Double) mean, 1e-9);
                }
                gi++;
              }
            }
          }
          assertThrows(NotSupportedException.class,
              () -> GroupBy.aggregate(exec, t, new int[] {bool}, List.of(new GroupBy.Agg(Reduction.SUM, str)), List.of("k", "s")));
        }
      }
    }
  }
}
