package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
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
          int dec38 = t.names().indexOf("dec38");
          for (int[] keys : new int[][] {{bool}, {str}, {bool, i8}, {str, bool}}) {
            List<GroupBy.Agg> aggs = List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0), new GroupBy.Agg(Reduction.COUNT_VALID, i32),
                new GroupBy.Agg(Reduction.SUM, i8), new GroupBy.Agg(Reduction.MIN, f64), new GroupBy.Agg(Reduction.MAX, i32),
                new GroupBy.Agg(Reduction.SUM, dec), new GroupBy.Agg(Reduction.MEAN, i8),
                new GroupBy.Agg(Reduction.VAR_SAMP, i8), new GroupBy.Agg(Reduction.STDDEV_POP, i8),
                new GroupBy.Agg(Reduction.ANY_VALUE, str), new GroupBy.Agg(Reduction.COUNT_DISTINCT, str),
                new GroupBy.Agg(Reduction.COUNT_DISTINCT, f64), new GroupBy.Agg(Reduction.MIN, str),
                new GroupBy.Agg(Reduction.MAX, str), new GroupBy.Agg(Reduction.MIN, bool), new GroupBy.Agg(Reduction.MAX, dec38),
                new GroupBy.Agg(Reduction.MEAN, dec38));
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
                  double[] xs = validI8.stream().mapToDouble(i -> (Byte) vi8.getObject(i)).toArray();
                  double sq = java.util.Arrays.stream(xs).map(x -> (x - want) * (x - want)).sum();
                  Object varSamp = out.getVector(keys.length + 7).getObject(gi);
                  if (xs.length < 2) {
                    assertEquals(null, varSamp);
                  } else {
                    assertEquals(sq / (xs.length - 1), (Double) varSamp, 1e-6);
                  }
                  assertEquals(Math.sqrt(sq / xs.length), (Double) out.getVector(keys.length + 8).getObject(gi), 1e-9);
                }
                FieldVector vs = r.getVector(str);
                assertEquals(members.stream().filter(i -> !vs.isNull(i)).findFirst().map(i -> vs.getObject(i).toString())
                    .orElse(null), java.util.Objects.toString(out.getVector(keys.length + 9).getObject(gi), null));
                assertEquals(members.stream().filter(i -> !vs.isNull(i)).map(i -> vs.getObject(i).toString()).distinct().count(),
                    out.getVector(keys.length + 10).getObject(gi));
                FieldVector vf = r.getVector(f64);
                assertEquals(members.stream().filter(i -> !vf.isNull(i)).map(i -> key(r, new int[] {f64}, i)).distinct().count(),
                    out.getVector(keys.length + 11).getObject(gi));
                // VARCHAR orders by unsigned UTF-8 bytes (not Java's UTF-16 order)
                java.util.Comparator<String> bytewise = (x, y) -> java.util.Arrays.compareUnsigned(
                    x.getBytes(java.nio.charset.StandardCharsets.UTF_8), y.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                List<String> strs = members.stream().filter(i -> !vs.isNull(i)).map(i -> vs.getObject(i).toString()).toList();
                assertEquals(strs.stream().min(bytewise).orElse(null), java.util.Objects.toString(out.getVector(keys.length + 12).getObject(gi), null));
                assertEquals(strs.stream().max(bytewise).orElse(null), java.util.Objects.toString(out.getVector(keys.length + 13).getObject(gi), null));
                FieldVector vb = r.getVector(bool);
                assertEquals(members.stream().filter(i -> !vb.isNull(i)).map(i -> (Boolean) vb.getObject(i)).min(Boolean::compare).orElse(null),
                    out.getVector(keys.length + 14).getObject(gi));
                FieldVector vw = r.getVector(dec38);
                assertEquals(members.stream().filter(i -> !vw.isNull(i)).map(i -> (BigDecimal) vw.getObject(i)).max(BigDecimal::compareTo).orElse(null),
                    out.getVector(keys.length + 15).getObject(gi));
                // 120-bit values: their sum is exact in 192 bits only if no value's high word is lost
                List<BigDecimal> wide = members.stream().filter(i -> !vw.isNull(i)).map(i -> (BigDecimal) vw.getObject(i)).toList();
                Object wideMean = out.getVector(keys.length + 16).getObject(gi);
                if (wide.isEmpty()) {
                  assertEquals(null, wideMean);
                } else {
                  double want = wide.stream().reduce(BigDecimal.ZERO, BigDecimal::add)
                      .divide(BigDecimal.valueOf(wide.size()), java.math.MathContext.DECIMAL64).doubleValue();
                  assertEquals(want, (Double) wideMean, Math.abs(want) * 1e-12);
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

  /**
   * 38-digit sums where most values fit 64 bits (as price * (1 - discount) does) and a few do not:
   * negative small values carry into the high word, wide ones take the 192-bit accumulator.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 33, 5000})
  void wideDecimalSumsOfMostlyNarrowValues(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        IntVector k = new IntVector("k", a); org.apache.arrow.vector.DecimalVector d = new org.apache.arrow.vector.DecimalVector("d", a, 38, 2)) {
      java.util.SplittableRandom random = new java.util.SplittableRandom(rows);
      Map<Integer, BigDecimal> want = new LinkedHashMap<>();
      for (int i = 0; i < rows; i++) {
        int key = random.nextInt(3);
        BigDecimal v = i % 97 == 5 ? new BigDecimal(java.math.BigInteger.ONE.shiftLeft(100).negate(), 2)
            : BigDecimal.valueOf(random.nextLong(-1_000_000_000L, 1_000_000_000L), 2);
        k.setSafe(i, key);
        d.setSafe(i, v);
        want.merge(key, v, BigDecimal::add);
      }
      k.setValueCount(rows);
      d.setValueCount(rows);
      try (VectorSchemaRoot r = new VectorSchemaRoot(List.<FieldVector>of(k, d)); HostTable t = HostTable.fromArrow(r);
          HostTable g = GroupBy.aggregate(exec, t, new int[] {0}, List.of(new GroupBy.Agg(Reduction.SUM, 1)), List.of("k", "s"));
          VectorSchemaRoot out = g.toArrow(a)) {
        assertEquals(want.size(), out.getRowCount());
        for (int gi = 0; gi < out.getRowCount(); gi++) {
          BigDecimal got = (BigDecimal) out.getVector(1).getObject(gi);
          assertEquals(0, want.get((Integer) out.getVector(0).getObject(gi)).compareTo(got), "group " + out.getVector(0).getObject(gi));
        }
      }
    }
  }

  /**
   * Keys that pack into one long a row ({@link PackedKeys}): direct and hashed, next to keys that do
   * not pack, against a map of groups. A NULL's slot holds a leftover value (Arrow keeps the data
   * under a cleared bit), which must not reach another column's bits; strings of different lengths
   * with equal bytes so far ("a", "a\0") must differ; ranges at the edges of a long must not wrap.
   */
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 5000, 140_000})
  void packedKeysGroupLikeAMapOfGroups(int rows) {
    String[] flags = {"A", "N", "R", "F"};
    String[] shorts = {"", "a", "a\0", "ab", "日本", "abcdefg", "é"};
    String[] longs = {"a", "abcdefgh", "日本語"};
    long[] edges = {Long.MIN_VALUE, Long.MAX_VALUE, 0};
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      org.apache.arrow.vector.VarCharVector flag = new org.apache.arrow.vector.VarCharVector("flag", a);
      org.apache.arrow.vector.VarCharVector status = new org.apache.arrow.vector.VarCharVector("status", a);
      org.apache.arrow.vector.VarCharVector shortStr = new org.apache.arrow.vector.VarCharVector("short", a);
      org.apache.arrow.vector.VarCharVector longStr = new org.apache.arrow.vector.VarCharVector("long", a);
      IntVector small = new IntVector("small", a);
      IntVector spread = new IntVector("spread", a);
      BigIntVector edge = new BigIntVector("edge", a);
      BigIntVector big = new BigIntVector("big", a);
      org.apache.arrow.vector.BitVector bit = new org.apache.arrow.vector.BitVector("bit", a);
      org.apache.arrow.vector.DateDayVector day = new org.apache.arrow.vector.DateDayVector("day", a);
      org.apache.arrow.vector.DecimalVector narrow = new org.apache.arrow.vector.DecimalVector("narrow", a, 38, 2);
      org.apache.arrow.vector.DecimalVector wide = new org.apache.arrow.vector.DecimalVector("wide", a, 38, 0);
      // 18 digits or fewer: read as a long, kept by Arrow in 16 bytes
      org.apache.arrow.vector.DecimalVector price = new org.apache.arrow.vector.DecimalVector("price", a, 9, 2);
      List<FieldVector> vs = List.of(flag, status, shortStr, longStr, small, spread, edge, big, bit, day, narrow, wide, price);
      java.util.SplittableRandom random = new java.util.SplittableRandom(rows);
      for (int i = 0; i < rows; i++) {
        flag.setSafe(i, flags[random.nextInt(flags.length)].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        status.setSafe(i, flags[random.nextInt(2)].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        shortStr.setSafe(i, shorts[random.nextInt(shorts.length)].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        longStr.setSafe(i, longs[random.nextInt(longs.length)].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        small.setSafe(i, random.nextInt(-3, 4));
        spread.setSafe(i, random.nextBoolean() ? Integer.MIN_VALUE + random.nextInt(3) : Integer.MAX_VALUE - random.nextInt(3));
        edge.setSafe(i, edges[random.nextInt(edges.length)]);
        big.setSafe(i, random.nextLong(-(1L << 40), 1L << 40) & ~0xffffL);
        bit.setSafe(i, random.nextInt(2));
        day.setSafe(i, 10_000 + random.nextInt(3));
        narrow.setSafe(i, BigDecimal.valueOf(random.nextLong(-5, 5), 2));
        wide.setSafe(i, i % 7 == 3 ? new BigDecimal(java.math.BigInteger.ONE.shiftLeft(70)) : BigDecimal.valueOf(random.nextInt(2)));
        price.setSafe(i, BigDecimal.valueOf(random.nextLong(-300, 300), 2));
        if (i % 5 == 2) {
          // a NULL over a value far outside the column's range: the leftover bytes stay
          int c = random.nextInt(vs.size());
          FieldVector v = vs.get(c);
          if (v instanceof IntVector iv) {
            iv.setSafe(i, Integer.MAX_VALUE);
          } else if (v instanceof BigIntVector bv) {
            bv.setSafe(i, -1L);
          } else if (v instanceof org.apache.arrow.vector.DateDayVector dv) {
            dv.setSafe(i, -1);
          }
          v.setNull(i);
        }
      }
      for (FieldVector v : vs) {
        v.setValueCount(rows);
      }
      try (VectorSchemaRoot r = new VectorSchemaRoot(vs); HostTable t = HostTable.fromArrow(r)) {
        int[][] keySets = {{0}, {0, 1}, {2}, {3}, {4, 8}, {5}, {6}, {7, 4}, {9, 0, 1}, {10}, {11}, {2, 0, 1, 4, 8, 9}, {2, 2, 2},
            {12}, {2, 12}};
        for (int[] keys : keySets) {
          Map<Object, Integer> want = new LinkedHashMap<>();
          for (int i = 0; i < rows; i++) {
            want.merge(key(r, keys, i), 1, Integer::sum);
          }
          List<String> names = names(keys.length + 1);
          try (HostTable g = GroupBy.aggregate(exec, t, keys, List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0)), names);
              VectorSchemaRoot out = g.toArrow(a)) {
            String where = java.util.Arrays.toString(keys) + " over " + rows + " rows";
            assertEquals(want.size(), out.getRowCount(), where);
            int gi = 0;
            int[] outKeys = java.util.stream.IntStream.range(0, keys.length).toArray();
            for (Map.Entry<Object, Integer> e : want.entrySet()) {
              assertEquals(e.getKey(), key(out, outKeys, gi), where + ", group " + gi);
              assertEquals((long) e.getValue(), out.getVector(keys.length).getObject(gi), where + ", group " + gi);
              gi++;
            }
          }
        }
        // which path each key set takes: the fast ones must be taken where they can be
        java.util.function.Function<int[], PackedKeys> packed = keys -> PackedKeys.of(exec,
            java.util.Arrays.stream(keys).mapToObj(t::column).toList(), rows);
        if (rows >= 33) {
          PackedKeys flags2 = packed.apply(new int[] {0, 1});
          assertTrue(flags2.bits() >= 16 && flags2.bits() <= 18, "two one-byte flags and their NULL bits: " + flags2.bits());
          assertEquals(flags2.bits() <= 16 || rows > 65536, flags2.direct(),
              "two one-byte flags index directly: with no NULL bit, or where the table is no larger than four entries a row");
          assertTrue(packed.apply(new int[] {4, 8}).direct(), "a small range and a boolean index directly");
          assertEquals(null, packed.apply(new int[] {3}), "an eight-byte string is not packed");
          assertEquals(null, packed.apply(new int[] {6}), "a range of 2^64 is not packed");
          assertEquals(null, packed.apply(new int[] {11}), "a decimal past a long is not packed");
          assertEquals(null, packed.apply(new int[] {2, 2, 2}), "more than 62 bits are not packed");
          assertTrue(!packed.apply(new int[] {7, 4}).direct(), "40 bits of range are hashed");
          int spreadBits = packed.apply(new int[] {5}).bits();
          assertTrue(spreadBits == 32 || spreadBits == 33, "a range across INT32's ends (and a NULL bit): " + spreadBits);
          assertTrue(packed.apply(new int[] {12}).bits() <= 11, "600 cents of range, and a NULL bit");
        }
      }
    }
  }

  /**
   * A grouping that takes a filter's kept rows equals the grouping of those rows gathered: the
   * same groups in the same order and every aggregate the same, where the keys index groups
   * directly (the other rows passed over) and where they do not (gathered first), with NULLs, and
   * for every shape of kept rows (none, one, all, all but the last, every third, most).
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 31, 32, 33, 3000})
  void groupingKeptRowsEqualsGroupingThemGathered(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3))) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows); HostTable t = HostTable.fromArrow(r)) {
          java.util.SplittableRandom random = new java.util.SplittableRandom(rows);
          List<int[]> selections = List.of(new int[0], new int[] {rows - 1},
              java.util.stream.IntStream.range(0, rows).toArray(), java.util.stream.IntStream.range(0, rows - 1).toArray(),
              java.util.stream.IntStream.range(0, rows).filter(i -> i % 3 == 1).toArray(),
              java.util.stream.IntStream.range(0, rows).filter(i -> random.nextInt(20) != 0).toArray());
          List<GroupBy.Agg> all = everyAggregate(t);
          List<GroupBy.Agg> plain = all.stream().filter(g -> g.op() != Reduction.COUNT_DISTINCT).toList();
          int[][] keySets = {{t.names().indexOf("i8")}, {t.names().indexOf("bool"), t.names().indexOf("i8")},
              {t.names().indexOf("str")}, {t.names().indexOf("f64")}};
          for (int[] keys : keySets) {
            for (List<GroupBy.Agg> aggs : List.of(plain, all)) {
              List<String> names = names(keys.length + aggs.size());
              for (int[] kept : selections) {
                String where = java.util.Arrays.toString(keys) + ", " + aggs.size() + " aggregates, " + kept.length + " of "
                    + rows + " rows, " + nulls;
                try (HostTable gathered = Filter.filter(exec, t, kept);
                    HostTable want = GroupBy.aggregate(exec, gathered, keys, aggs, names);
                    HostTable got = GroupBy.aggregate(exec, t, keys, aggs, names, kept);
                    VectorSchemaRoot w = want.toArrow(a); VectorSchemaRoot g = got.toArrow(a)) {
                  assertEquals(w.contentToTSVString(), g.contentToTSVString(), where);
                }
              }
            }
          }
          assertThrows(dev.gpudf.columnar.error.InternalException.class, () -> GroupBy.aggregate(exec, t, new int[] {0},
              List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0)), names(2), new int[] {0, 0}), "rows must ascend");
          assertThrows(dev.gpudf.columnar.error.InternalException.class, () -> GroupBy.aggregate(exec, t, new int[] {0},
              List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0)), names(2), new int[] {rows}), "rows past the table");
          try (Filter.Selection other = Filter.select(new int[0], rows + 1)) {
            assertThrows(dev.gpudf.columnar.error.InternalException.class, () -> GroupBy.aggregateSelected(exec, t,
                new int[] {0}, List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0)), names(2), other), "a selection of another table");
          }
        }
      }
    }
  }

  /** Every aggregate the type allows, over every column of {@code t}. */
  static List<GroupBy.Agg> everyAggregate(HostTable t) {
    List<GroupBy.Agg> aggs = new ArrayList<>(List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0)));
    for (int c = 0; c < t.columnCount(); c++) {
      TypeId id = t.column(c).type().id();
      boolean numeric = id != TypeId.BOOL && id != TypeId.STRING && id != TypeId.DATE && id != TypeId.TIMESTAMP;
      boolean wide = id == TypeId.DECIMAL && !t.column(c).type().isDecimal64();
      aggs.add(new GroupBy.Agg(Reduction.COUNT_VALID, c));
      aggs.add(new GroupBy.Agg(Reduction.ANY_VALUE, c));
      aggs.add(new GroupBy.Agg(Reduction.COUNT_DISTINCT, c));
      if (numeric) {
        // random INT64 and 38-digit values overflow their sums (gpuSumOverflowIsAnError)
        if (id != TypeId.INT64 && !wide) {
          aggs.add(new GroupBy.Agg(Reduction.SUM, c));
        }
        aggs.add(new GroupBy.Agg(Reduction.MEAN, c));
      }
      // every type has MIN and MAX (VARCHAR, BOOLEAN and 38 digits by rank: RankedExtremes)
      aggs.add(new GroupBy.Agg(Reduction.MIN, c));
      aggs.add(new GroupBy.Agg(Reduction.MAX, c));
      if (numeric && id != TypeId.DECIMAL) {
        for (Reduction r : List.of(Reduction.VAR_POP, Reduction.VAR_SAMP, Reduction.STDDEV_POP, Reduction.STDDEV_SAMP)) {
          aggs.add(new GroupBy.Agg(r, c));
        }
      }
    }
    return aggs;
  }

  private static List<String> names(int count) {
    return java.util.stream.IntStream.range(0, count).mapToObj(k -> "c" + k).toList();
  }

  /** The GPU group-by equals the CPU twin: same groups in the same order, every aggregate, every key type. */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 50_000})
  void gpuMatchesTheCpuTwin(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 4L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows + 5L); HostTable h = HostTable.fromArrow(r);
            DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
          List<GroupBy.Agg> aggs = everyAggregate(h);
          List<int[]> keySets = new ArrayList<>();
          for (int c = 0; c < h.columnCount(); c++) {
            keySets.add(new int[] {c});
          }
          keySets.add(new int[] {h.names().indexOf("bool"), h.names().indexOf("i8")});
          keySets.add(new int[] {h.names().indexOf("str"), h.names().indexOf("bool"), h.names().indexOf("dec38")});
          keySets.add(new int[0]);
          for (int[] keys : keySets) {
            List<String> names = names(keys.length + aggs.size());
            try (HostTable want = GroupBy.aggregate(cpu, h, keys, aggs, names); VectorSchemaRoot w = want.toArrow(a);
                DeviceTable got = GroupBy.aggregate(g, d, keys, aggs, names); VectorSchemaRoot o = got.toArrow(a, g.stream())) {
              Rows.assertSameOrderedRows(w, o, java.util.Arrays.toString(keys) + " " + nulls + " " + rows);
            }
          }
        }
      }
    }
  }

  /**
   * A GPU grouping of a filter's selection (its mask: rows it drops, NULL included, join no group)
   * equals the CPU grouping of the kept rows gathered: the same groups in the same order and every
   * aggregate the same, in place (no COUNT_DISTINCT, no MIN/MAX by rank; few groups summed in
   * registers with a BOOLEAN key) and compacted first (every aggregate), for masks keeping none,
   * all, all but the last, every third row, and about 95% of rows at random.
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1000, 20_000})
  void gpuGroupingOfASelectionMatchesTheCpuTwinOfTheKeptRows(int rows) {
    groupSelections(rows);
  }

  /** {@link #gpuGroupingOfASelectionMatchesTheCpuTwinOfTheKeptRows} with several rows a thread (45 s on an H100: the CPU twin's share). */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {300_000})
  void gpuGroupingOfALargeSelectionMatchesTheCpuTwinOfTheKeptRows(int rows) {
    groupSelections(rows);
  }

  private static void groupSelections(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 4L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      java.util.SplittableRandom random = new java.util.SplittableRandom(rows);
      List<java.util.function.IntFunction<Boolean>> masks = List.of(i -> false, i -> true, i -> i != rows - 1,
          i -> i % 3 == 1, i -> i % 7 == 3 ? null : random.nextInt(20) != 0);
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3))) {
        try (VectorSchemaRoot r = TestTables.allTypes(a, rows, nulls, rows + 5L); HostTable h = HostTable.fromArrow(r);
            DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream())) {
          List<GroupBy.Agg> all = everyAggregate(h);
          List<GroupBy.Agg> inPlace = all.stream().filter(x -> x.op() != Reduction.COUNT_DISTINCT && !((x.op() == Reduction.MIN
              || x.op() == Reduction.MAX) && RankedExtremes.groupedByRank(h.column(x.column()).type()))).toList();
          int[][] keySets = {{h.names().indexOf("i8")}, {h.names().indexOf("bool")}, {h.names().indexOf("str")},
              {h.names().indexOf("str"), h.names().indexOf("bool"), h.names().indexOf("dec38")}};
          for (int m = 0; m < masks.size(); m++) {
            try (org.apache.arrow.vector.BitVector bits = new org.apache.arrow.vector.BitVector("keep", a)) {
              bits.allocateNew(rows);
              List<Integer> kept = new ArrayList<>();
              for (int i = 0; i < rows; i++) {
                Boolean keep = masks.get(m).apply(i);
                if (keep != null) {
                  bits.set(i, keep ? 1 : 0);
                  if (keep) {
                    kept.add(i);
                  }
                }
              }
              bits.setValueCount(rows);
              try (VectorSchemaRoot maskRoot = new VectorSchemaRoot(List.<FieldVector>of(bits));
                  DeviceTable maskTable = DeviceTable.fromArrow(gpu, setRows(maskRoot, rows), g.stream());
                  Filter.Selection selection = Filter.select(g, maskTable.column(0));
                  HostTable gathered = Filter.filter(cpu, h, kept.stream().mapToInt(Integer::intValue).toArray())) {
                assertEquals(kept.size(), selection.count(), "mask " + m + ", " + rows + " rows");
                for (int[] keys : keySets) {
                  for (List<GroupBy.Agg> aggs : List.of(inPlace, all)) {
                    List<String> names = names(keys.length + aggs.size());
                    String where = "mask " + m + ", keys " + java.util.Arrays.toString(keys) + ", " + aggs.size()
                        + " aggregates, " + kept.size() + " of " + rows + " rows, " + nulls;
                    try (HostTable want = GroupBy.aggregate(cpu, gathered, keys, aggs, names); VectorSchemaRoot w = want.toArrow(a);
                        DeviceTable got = (DeviceTable) GroupBy.aggregateSelected(g, d, keys, aggs, names, selection);
                        VectorSchemaRoot o = got.toArrow(a, g.stream())) {
                      Rows.assertSameOrderedRows(w, o, where);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  private static VectorSchemaRoot setRows(VectorSchemaRoot root, int rows) {
    root.setRowCount(rows);
    return root;
  }

  /**
   * SUM past INT64 (random INT64 values) and past 38 digits (9e37 + 9e37) fails on both backends
   * with the same error; a DECIMAL(38) sum that fits is exact on both.
   */
  @RequiresGpu
  @org.junit.jupiter.api.Test
  void gpuSumOverflowIsAnError() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a);
        VectorSchemaRoot r = TestTables.allTypes(a, 1000, Nulls.NONE, 9);
        org.apache.arrow.vector.DecimalVector big = new org.apache.arrow.vector.DecimalVector("big", a, 38, 0)) {
      big.allocateNew(4);
      for (int i = 0; i < 4; i++) {
        big.set(i, new BigDecimal(i < 2 ? "90000000000000000000000000000000000000" : "-12345678901234567890123456789012345678"));
      }
      big.setValueCount(4);
      try (VectorSchemaRoot bigRoot = new VectorSchemaRoot(List.<FieldVector>of(big))) {
        bigRoot.setRowCount(4);
        for (VectorSchemaRoot in : List.of(r, bigRoot)) {
          try (HostTable h = HostTable.fromArrow(in); DeviceTable d = DeviceTable.fromArrow(gpu, in, g.stream())) {
            int column = in == r ? h.names().indexOf("i64") : 0;
            List<GroupBy.Agg> sum = List.of(new GroupBy.Agg(Reduction.SUM, column));
            int[] keys = in == r ? new int[] {h.names().indexOf("bool")} : new int[0];
            String want = assertThrows(dev.gpudf.columnar.error.UserException.class,
                () -> GroupBy.aggregate(cpu, h, keys, sum, List.of("k", "s").subList(0, keys.length + 1))).getMessage();
            String got = assertThrows(dev.gpudf.columnar.error.UserException.class,
                () -> GroupBy.aggregate(g, d, keys, sum, List.of("k", "s").subList(0, keys.length + 1))).getMessage();
            assertEquals(want, got, h.names().get(column));
          }
        }
        // the two negative values alone: -24691357802469135780246913578024691356, which fits
        try (VectorSchemaRoot fits = TestTables.slice(bigRoot, 2, 2); HostTable h = HostTable.fromArrow(fits);
            DeviceTable d = DeviceTable.fromArrow(gpu, fits, g.stream());
            HostTable want = GroupBy.aggregate(cpu, h, new int[0], List.of(new GroupBy.Agg(Reduction.SUM, 0)), List.of("s"));
            VectorSchemaRoot w = want.toArrow(a);
            DeviceTable got = GroupBy.aggregate(g, d, new int[0], List.of(new GroupBy.Agg(Reduction.SUM, 0)), List.of("s"));
            VectorSchemaRoot o = got.toArrow(a, g.stream())) {
          assertEquals(new BigDecimal("-24691357802469135780246913578024691356"), w.getVector(0).getObject(0));
          Rows.assertSameOrderedRows(w, o, "DECIMAL(38) sum");
        }
      }
    }
  }

  /**
   * Up to {@link GpuHashGroupBy#PRIVATE_GROUPS} groups, SUM and MEAN run per-thread accumulators
   * ({@code groupby_sum_int_private_*}); one group more runs the shared-memory kernel. Both equal the
   * CPU twin for 8-bit, 64-bit and 38-digit values with NULLs, on sizes up to several rows a thread,
   * where each column's SUMs and AVGs share one pass.
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1000, 300_000})
  void gpuSumsOverFewGroupsMatchTheCpuTwin(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      for (int groups = 1; groups <= GpuHashGroupBy.PRIVATE_GROUPS + 1; groups++) {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(groups);
        try (IntVector k = new IntVector("k", a); org.apache.arrow.vector.TinyIntVector small =
                new org.apache.arrow.vector.TinyIntVector("small", a);
            BigIntVector big = new BigIntVector("big", a);
            org.apache.arrow.vector.DecimalVector wide = new org.apache.arrow.vector.DecimalVector("wide", a, 38, 2)) {
          k.allocateNew(rows);
          small.allocateNew(rows);
          big.allocateNew(rows);
          wide.allocateNew(rows);
          for (int i = 0; i < rows; i++) {
            // with NULL keys (every 5th row when there is more than one group) one group more
            if (groups == 1 || i % 5 != 4) {
              k.set(i, i % (groups == 1 ? 1 : groups - 1));
            }
            if (i % 3 != 1) {
              small.set(i, (byte) rnd.nextInt(-128, 128));
              big.set(i, rnd.nextLong() >> 24);
              wide.set(i, new BigDecimal(new java.math.BigInteger(100, new java.util.Random(rnd.nextLong()))
                  .multiply(java.math.BigInteger.valueOf(rnd.nextBoolean() ? 1 : -1)), 2));
            }
          }
          for (FieldVector v : List.<FieldVector>of(k, small, big, wide)) {
            v.setValueCount(rows);
          }
          List<GroupBy.Agg> aggs = new ArrayList<>();
          for (int c = 1; c <= 3; c++) {
            aggs.add(new GroupBy.Agg(Reduction.SUM, c));
            aggs.add(new GroupBy.Agg(Reduction.MEAN, c));
          }
          // a column's sums are made once for all its SUMs and AVGs, in any order
          aggs.add(new GroupBy.Agg(Reduction.MEAN, 3));
          aggs.add(new GroupBy.Agg(Reduction.SUM, 1));
          List<String> names = names(1 + aggs.size());
          try (VectorSchemaRoot whole = new VectorSchemaRoot(List.<FieldVector>of(k, small, big, wide))) {
            whole.setRowCount(rows);
            for (boolean sliced : rows > 1000 ? List.of(false, true) : List.of(false)) {
              try (VectorSchemaRoot in = sliced ? TestTables.slice(whole, 7, rows - 20) : null) {
                VectorSchemaRoot r = in == null ? whole : in;
                try (HostTable h = HostTable.fromArrow(r); DeviceTable d = DeviceTable.fromArrow(gpu, r, g.stream());
                    HostTable want = GroupBy.aggregate(cpu, h, new int[] {0}, aggs, names);
                    VectorSchemaRoot wr = want.toArrow(a);
                    DeviceTable got = GroupBy.aggregate(g, d, new int[] {0}, aggs, names);
                    VectorSchemaRoot gr = got.toArrow(a, g.stream())) {
                  assertEquals(Math.min(rows, groups), wr.getRowCount(), "groups");
                  Rows.assertSameOrderedRows(wr, gr, groups + " groups, " + rows + " rows" + (sliced ? ", sliced" : ""));
                  for (int c = 0; c < got.columnCount(); c++) {
                    // the null count each result states (counted by the launch that writes its validity)
                    assertEquals(want.column(c).nullCount(), got.column(c).nullCount(), "null count of " + names.get(c));
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  /** Skewed keys (one key holds half the rows), all keys equal and all keys distinct, at 10^7 rows. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(strings = {"skewed", "equal", "distinct", "sliced"})
  void gpuKeyDistributions(String shape) {
    int rows = 10_000_000;
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 8L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a);
        IntVector k = new IntVector("k", a); Float8Vector v = new Float8Vector("v", a);
        BigIntVector w = new BigIntVector("w", a)) {
      java.util.SplittableRandom rnd = new java.util.SplittableRandom(42);
      k.allocateNew(rows);
      v.allocateNew(rows);
      w.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        k.set(i, switch (shape) {
          case "skewed" -> i % 2 == 0 ? 7 : rnd.nextInt(1_000_000);
          case "equal" -> 3;
          case "distinct" -> rows - i;
          default -> rnd.nextInt(1000);
        });
        v.set(i, rnd.nextDouble());
        w.set(i, rnd.nextLong() >> 40);
      }
      k.setValueCount(rows);
      v.setValueCount(rows);
      w.setValueCount(rows);
      List<GroupBy.Agg> aggs = List.of(new GroupBy.Agg(Reduction.COUNT_ALL, 0), new GroupBy.Agg(Reduction.SUM, 1),
          new GroupBy.Agg(Reduction.SUM, 2), new GroupBy.Agg(Reduction.MIN, 2), new GroupBy.Agg(Reduction.VAR_POP, 1));
      List<String> names = names(1 + aggs.size());
      try (VectorSchemaRoot whole = new VectorSchemaRoot(List.<FieldVector>of(k, v, w));
          VectorSchemaRoot root = shape.equals("sliced") ? TestTables.slice(whole, 12_345, rows / 2) : null) {
        whole.setRowCount(rows);
        VectorSchemaRoot in = root == null ? whole : root;
        try (HostTable h = HostTable.fromArrow(in); DeviceTable d = DeviceTable.fromArrow(gpu, in, g.stream());
            HostTable want = GroupBy.aggregate(cpu, h, new int[] {0}, aggs, names); VectorSchemaRoot wr = want.toArrow(a);
            DeviceTable got = GroupBy.aggregate(g, d, new int[] {0}, aggs, names); VectorSchemaRoot gr = got.toArrow(a, g.stream())) {
          Rows.assertSameOrderedRows(wr, gr, shape);
        }
      }
    }
  }
}
