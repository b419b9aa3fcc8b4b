package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.kernels.Window.Frame;
import dev.gpudf.kernels.Window.Function;
import dev.gpudf.kernels.Window.Kind;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Window functions on the CPU against a brute-force oracle that scans each row's partition and
 * frame: random partitions (NULL and non-ASCII keys among them, one-row partitions), order keys
 * with ties and NULLs, values with NULLs, every function and every frame kind, at edge sizes.
 */
class WindowTest {
  private static final long U = Window.UNBOUNDED;
  private static final List<Frame> FRAMES = List.of(
      new Frame(true, U, 0), new Frame(true, 2, 1), new Frame(true, 0, U), new Frame(true, U, U),
      new Frame(true, 1, -1), new Frame(true, -1, 3), new Frame(false, U, 0), new Frame(false, 0, U),
      new Frame(false, U, U), new Frame(false, 0, 0), new Frame(false, 2, 1), new Frame(false, 1, -1),
      new Frame(false, U, 2), new Frame(false, -1, U));

  /**
   * Columns: 0 partition (VARCHAR), 1 order (INT), 2 x (DOUBLE), 3 d (DECIMAL(9,2)), 4 s (VARCHAR),
   * 5 i (INT), 6 w (DECIMAL(38,3), 128-bit on the device), 7 l (BIGINT), 8 f (DOUBLE with -0.0, 0.0, NaN and infinities).
   */
  private static VectorSchemaRoot table(RootAllocator a, int rows, long seed) {
    Random r = new Random(seed);
    String[] parts = {"a", "b", "ünï", "日本", null, "z" + seed};
    VarCharVector p = new VarCharVector("p", a);
    IntVector o = new IntVector("o", a);
    Float8Vector x = new Float8Vector("x", a);
    DecimalVector d = new DecimalVector("d", a, 9, 2);
    VarCharVector s = new VarCharVector("s", a);
    IntVector i = new IntVector("i", a);
    DecimalVector w = new DecimalVector("w", a, 38, 3);
    org.apache.arrow.vector.BigIntVector l = new org.apache.arrow.vector.BigIntVector("l", a);
    Float8Vector f = new Float8Vector("f", a);
    double[] specials = {-0.0, 0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.5, -2.25};
    w.allocateNew();
    l.allocateNew();
    f.allocateNew();
    p.allocateNew();
    o.allocateNew();
    x.allocateNew();
    d.allocateNew();
    s.allocateNew();
    i.allocateNew();
    for (int k = 0; k < rows; k++) {
      // the last partition key is rare: most tables then have one-row partitions
      String part = parts[r.nextInt(20) == 0 ? 5 : r.nextInt(5)];
      if (part == null) {
        p.setNull(k);
      } else {
        p.setSafe(k, part.getBytes(StandardCharsets.UTF_8));
      }
      if (r.nextInt(8) == 0) {
        o.setNull(k);
      } else {
        o.setSafe(k, r.nextInt(6));
      }
      if (r.nextInt(5) == 0) {
        x.setNull(k);
        d.setNull(k);
        s.setNull(k);
      } else {
        x.setSafe(k, r.nextInt(2000) / 8.0 - 100);
        d.setSafe(k, BigDecimal.valueOf(r.nextInt(200_000) - 100_000, 2));
        s.setSafe(k, ("v" + r.nextInt(50) + (r.nextBoolean() ? "é" : "")).getBytes(StandardCharsets.UTF_8));
      }
      i.setSafe(k, r.nextInt(1000) - 500);
      if (r.nextInt(6) == 0) {
        w.setNull(k);
        l.setNull(k);
        f.setNull(k);
      } else {
        w.setSafe(k, new BigDecimal(new java.math.BigInteger(100, r), 3).multiply(BigDecimal.valueOf(r.nextBoolean() ? 1 : -1)));
        l.setSafe(k, r.nextLong() % 1_000_000_000_000L);
        f.setSafe(k, specials[r.nextInt(specials.length)]);
      }
    }
    VectorSchemaRoot root = VectorSchemaRoot.of(p, o, x, d, s, i, w, l, f);
    root.setRowCount(rows);
    return root;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1000})
  void everyFunctionAndFrameMatchesTheOracle(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = table(a, rows, rows); HostTable unsorted = HostTable.fromArrow(root);
        HostTable t = Sort.sort(exec, unsorted, List.of(SortKey.asc(0), SortKey.asc(1)))) {
      List<Function> functions = rankings();
      Frame whole = new Frame(false, U, U);
      functions.add(new Function(Kind.LAG, 4, 1, whole));
      functions.add(new Function(Kind.LEAD, 2, 2, whole));
      for (Frame f : FRAMES) {
        functions.add(new Function(Kind.COUNT_ALL, -1, 0, f));
        functions.add(new Function(Kind.COUNT, 2, 0, f));
        functions.add(new Function(Kind.SUM, 2, 0, f));
        functions.add(new Function(Kind.SUM, 3, 0, f));
        functions.add(new Function(Kind.SUM0, 5, 0, f));
        functions.add(new Function(Kind.AVG, 3, 0, f));
        functions.add(new Function(Kind.MIN, 2, 0, f));
        functions.add(new Function(Kind.MAX, 4, 0, f));
        functions.add(new Function(Kind.FIRST_VALUE, 3, 0, f));
        functions.add(new Function(Kind.LAST_VALUE, 4, 0, f));
        functions.add(new Function(Kind.NTH_VALUE, 2, 2, f));
      }
      List<HostColumn> got = Window.compute(exec, t, new int[] {0}, List.of(SortKey.asc(1)), functions);
      try {
        for (int f = 0; f < functions.size(); f++) {
          for (int row = 0; row < rows; row++) {
            Object want = oracle(t, functions.get(f), row);
            Object have = got.get(f).vector().getObject(row);
            assertSame(want, have, functions.get(f) + " at row " + row + " of " + rows);
          }
        }
      } finally {
        got.forEach(HostColumn::close);
      }
    }
  }

  /**
   * The GPU ({@code window.cu}) against the CPU twin on the same sorted rows: every function and
   * every frame the GPU runs, partitions of one key (NULL and non-ASCII among them), of two keys
   * (mostly one row each) and none, order keys with ties, NULLs, -0.0 and NaN, values with NULLs,
   * 128-bit decimals, at edge sizes and over many blocks.
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1000, 5_000})
  void gpuMatchesTheCpuTwin(int rows) {
    gpuMatchesTheCpuTwin(rows, gpuFunctions(), 4L << 30);
  }

  /**
   * {@link #gpuMatchesTheCpuTwin} on 600,000 rows (past 270,000 a scan chunk holds several tiles;
   * deep sparse tables) for one function of each kind and frame shape, in the {@code gpu-heavy}
   * suite (3 million rows did not finish in 200 s: the CPU twin and the per-value check are slow).
   */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {600_000})
  void gpuMatchesTheCpuTwinOnManyRows(int rows) {
    List<Function> some = new ArrayList<>();
    List<Function> all = gpuFunctions();
    for (int i = 0; i < all.size(); i += 7) {
      some.add(all.get(i));
    }
    gpuMatchesTheCpuTwin(rows, some, 32L << 30);
  }

  private static void gpuMatchesTheCpuTwin(int rows, List<Function> functions, long poolBytes) {
    record Shape(int[] partition, List<SortKey> order) { }
    List<Shape> shapes = List.of(new Shape(new int[] {0}, List.of(SortKey.asc(1))),
        new Shape(new int[] {0, 5}, List.of(SortKey.desc(2))), new Shape(new int[] {}, List.of(SortKey.desc(8), SortKey.asc(1))),
        new Shape(new int[] {1}, List.of()));
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, poolBytes, 256L << 20);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a); VectorSchemaRoot root = table(a, rows, rows + 7);
        HostTable unsorted = HostTable.fromArrow(root)) {
      for (Shape shape : shapes) {
        List<SortKey> keys = new ArrayList<>();
        for (int k : shape.partition()) {
          keys.add(SortKey.asc(k));
        }
        keys.addAll(shape.order());
        try (HostTable t = Sort.sort(cpu, unsorted, keys); VectorSchemaRoot sortedRoot = t.toArrow(a);
            DeviceTable d = DeviceTable.fromArrow(gpu, sortedRoot, g.stream());
            HostTable wantTable = new HostTable(names(functions.size()),
                Window.compute(cpu, t, shape.partition(), shape.order(), functions), rows)) {
          try (DeviceTable gotTable = new DeviceTable(gpu, names(functions.size()),
                  Window.compute(g, d, shape.partition(), shape.order(), functions), rows);
              VectorSchemaRoot back = gotTable.toArrow(a, g.stream())) {
            for (int f = 0; f < functions.size(); f++) {
              assertEquals(wantTable.column(f).type(), gotTable.column(f).type(), functions.get(f).toString());
              for (int row = 0; row < rows; row++) {
                Object want = wantTable.column(f).vector().getObject(row);
                Object have = back.getVector(f).getObject(row);
                // exact: these sums are of exactly representable values, and -0.0 is not 0.0
                assertEquals(want instanceof BigDecimal b ? b.stripTrailingZeros() : want,
                    have instanceof BigDecimal b ? b.stripTrailingZeros() : have,
                    functions.get(f) + " at row " + row + " of " + rows + ", " + keys);
              }
            }
          }
        }
      }
      // a RANGE frame with an offset is the CPU twin's alone, and says so
      try (DeviceTable d = DeviceTable.fromArrow(gpu, root, g.stream())) {
        List<Function> range = List.of(new Function(Kind.SUM, 2, 0, new Frame(false, 1, 0)));
        assertThrows(NotSupportedException.class, () -> Window.compute(g, d, new int[] {}, List.of(SortKey.asc(1)), range));
      }
    }
  }

  private static List<String> names(int n) {
    return java.util.stream.IntStream.range(0, n).mapToObj(i -> "f" + i).toList();
  }

  /** The ranking functions over whole partitions, NTILE with few and with more buckets than rows. */
  private static List<Function> rankings() {
    List<Function> functions = new ArrayList<>();
    Frame whole = new Frame(false, U, U);
    for (Kind k : List.of(Kind.ROW_NUMBER, Kind.RANK, Kind.DENSE_RANK, Kind.PERCENT_RANK, Kind.CUME_DIST)) {
      functions.add(new Function(k, -1, 0, whole));
    }
    functions.add(new Function(Kind.NTILE, -1, 3, whole));
    functions.add(new Function(Kind.NTILE, -1, 50, whole));
    return functions;
  }

  private static List<Function> gpuFunctions() {
    List<Function> functions = rankings();
    Frame whole = new Frame(false, U, U);
    functions.add(new Function(Kind.LAG, 4, 1, whole));
    functions.add(new Function(Kind.LEAD, 6, 2, whole));
    functions.add(new Function(Kind.LAG, 3, Long.MAX_VALUE - 1, whole));
    for (Frame f : FRAMES) {
      if (f.rangeOffsets()) {
        continue;
      }
      functions.add(new Function(Kind.COUNT_ALL, -1, 0, f));
      functions.add(new Function(Kind.COUNT, 4, 0, f));
      functions.add(new Function(Kind.SUM, 2, 0, f));
      functions.add(new Function(Kind.SUM, 3, 0, f));
      functions.add(new Function(Kind.SUM, 6, 0, f));
      functions.add(new Function(Kind.SUM, 7, 0, f));
      functions.add(new Function(Kind.SUM0, 5, 0, f));
      functions.add(new Function(Kind.AVG, 3, 0, f));
      functions.add(new Function(Kind.AVG, 7, 0, f));
      functions.add(new Function(Kind.MIN, 2, 0, f));
      functions.add(new Function(Kind.MAX, 4, 0, f));
      functions.add(new Function(Kind.MIN, 6, 0, f));
      functions.add(new Function(Kind.MAX, 8, 0, f));
      functions.add(new Function(Kind.MIN, 8, 0, f));
      functions.add(new Function(Kind.FIRST_VALUE, 3, 0, f));
      functions.add(new Function(Kind.LAST_VALUE, 4, 0, f));
      functions.add(new Function(Kind.NTH_VALUE, 6, 2, f));
    }
    functions.add(new Function(Kind.NTH_VALUE, 2, Long.MAX_VALUE, new Frame(true, U, U)));
    return functions;
  }

  @Test
  void rangeFramesWithAnOffsetNeedOneNumericKey() {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a);
        VectorSchemaRoot root = table(a, 10, 1); HostTable t = HostTable.fromArrow(root)) {
      List<Function> sum = List.of(new Function(Kind.SUM, 2, 0, new Frame(false, 1, 0)));
      assertThrows(NotSupportedException.class,
          () -> Window.compute(exec, t, new int[] {}, List.of(SortKey.asc(1), SortKey.asc(2)), sum));
      assertThrows(NotSupportedException.class, () -> Window.compute(exec, t, new int[] {}, List.of(SortKey.asc(4)), sum));
    }
  }

  private static void assertSame(Object want, Object have, String what) {
    if (want instanceof Double w && have instanceof Double h) {
      assertEquals(w, h, 1e-9 * Math.max(1, Math.abs(w)), what);
    } else if (want instanceof BigDecimal w && have instanceof BigDecimal h) {
      assertEquals(0, w.compareTo(h), what + ": " + w + " vs " + h);
    } else {
      assertEquals(String.valueOf(want), String.valueOf(have), what);
    }
  }

  private static Object value(HostTable t, int column, int row) {
    return t.column(column).vector().getObject(row);
  }

  private static boolean same(HostTable t, int column, int r1, int r2) {
    return Objects.equals(value(t, column, r1), value(t, column, r2));
  }

  /** The function's value at {@code row}, by scanning: what the SQL standard says, with no shortcut. */
  private static Object oracle(HostTable t, Function f, int row) {
    int n = t.rowCount();
    int ps = row;
    while (ps > 0 && same(t, 0, ps - 1, row)) {
      ps--;
    }
    int pe = row;
    while (pe < n - 1 && same(t, 0, pe + 1, row)) {
      pe++;
    }
    int qs = row;
    while (qs > ps && same(t, 1, qs - 1, row)) {
      qs--;
    }
    int qe = row;
    while (qe < pe && same(t, 1, qe + 1, row)) {
      qe++;
    }
    long size = pe - ps + 1;
    switch (f.kind()) {
      case ROW_NUMBER:
        return (long) (row - ps + 1);
      case RANK:
        return (long) (qs - ps + 1);
      case DENSE_RANK: {
        long groups = 1;
        for (int k = ps + 1; k <= qs; k++) {
          groups += same(t, 1, k - 1, k) ? 0 : 1;
        }
        return groups;
      }
      case PERCENT_RANK:
        return size == 1 ? 0.0 : (double) (qs - ps) / (size - 1);
      case CUME_DIST:
        return (double) (qe - ps + 1) / size;
      case NTILE: {
        // the standard's definition: buckets of size/buckets rows, the first size%buckets one larger
        long j = row - ps;
        long bucket = 1;
        long start = 0;
        for (long b = 1; b <= f.n(); b++) {
          long rowsIn = size / f.n() + (b <= size % f.n() ? 1 : 0);
          if (j >= start && j < start + rowsIn) {
            bucket = b;
          }
          start += rowsIn;
        }
        return bucket;
      }
      case LAG:
      case LEAD: {
        long at = f.kind() == Kind.LAG ? row - f.n() : row + f.n();
        return at < ps || at > pe ? null : value(t, f.arg(), (int) at);
      }
      default:
        break;
    }
    Frame fr = f.frame();
    long lo;
    long hi;
    if (fr.rows()) {
      lo = fr.lower() == U ? ps : Math.max(ps, row - fr.lower());
      hi = fr.upper() == U ? pe : Math.min(pe, row + fr.upper());
    } else if (value(t, 1, row) == null || (fr.lower() == 0 || fr.lower() == U) && (fr.upper() == 0 || fr.upper() == U)) {
      lo = fr.lower() == U ? ps : qs;
      hi = fr.upper() == U ? pe : qe;
    } else {
      // RANGE with offsets: the rows whose key lies in [v - lower, v + upper], a NULL key (sorted
      // last) counting as above every value, as DuckDB and PostgreSQL take it
      int v = (Integer) value(t, 1, row);
      lo = fr.lower() == U ? ps : fr.lower() == 0 ? qs : Long.MAX_VALUE;
      hi = fr.upper() == U ? pe : fr.upper() == 0 ? qe : Long.MIN_VALUE;
      boolean any = false;
      for (int k = ps; k <= pe; k++) {
        Object key = value(t, 1, k);
        boolean in = (fr.lower() == U || key == null || (Integer) key >= v - fr.lower())
            && (fr.upper() == U || key != null && (Integer) key <= v + fr.upper());
        if (in) {
          any = true;
          if (fr.lower() != U && fr.lower() != 0) {
            lo = Math.min(lo, k);
          }
          if (fr.upper() != U && fr.upper() != 0) {
            hi = Math.max(hi, k);
          }
        }
      }
      if (!any && (lo == Long.MAX_VALUE || hi == Long.MIN_VALUE)) {
        lo = row;
        hi = row - 1;
      }
    }
    List<Object> values = new ArrayList<>();
    for (long k = lo; k <= hi; k++) {
      values.add(f.arg() < 0 ? "row" : value(t, f.arg(), (int) k));
    }
    List<Object> valid = values.stream().filter(Objects::nonNull).toList();
    switch (f.kind()) {
      case COUNT_ALL:
        return (long) values.size();
      case COUNT:
        return (long) valid.size();
      case SUM:
      case SUM0:
      case AVG: {
        if (valid.isEmpty()) {
          return f.kind() == Kind.SUM0 ? sum0(t, f) : null;
        }
        if (valid.get(0) instanceof Double) {
          double s = valid.stream().mapToDouble(v -> (Double) v).sum();
          return f.kind() == Kind.AVG ? (Object) (s / valid.size()) : (Object) s;
        }
        if (valid.get(0) instanceof BigDecimal) {
          BigDecimal s = valid.stream().map(v -> (BigDecimal) v).reduce(BigDecimal.ZERO, BigDecimal::add);
          return f.kind() == Kind.AVG ? (Object) (s.doubleValue() / valid.size()) : (Object) s;
        }
        long s = valid.stream().mapToLong(v -> ((Number) v).longValue()).sum();
        return f.kind() == Kind.AVG ? (Object) ((double) s / valid.size()) : (Object) s;
      }
      case MIN:
      case MAX: {
        Object best = null;
        for (Object v : valid) {
          int c = best == null ? 0 : compare(v, best);
          if (best == null || (f.kind() == Kind.MIN ? c < 0 : c > 0)) {
            best = v;
          }
        }
        return best;
      }
      case FIRST_VALUE:
        return values.isEmpty() ? null : values.get(0);
      case LAST_VALUE:
        return values.isEmpty() ? null : values.get(values.size() - 1);
      case NTH_VALUE:
        return values.size() < f.n() ? null : values.get((int) f.n() - 1);
      default:
        throw new IllegalStateException("no oracle for " + f.kind());
    }
  }

  private static Object sum0(HostTable t, Function f) {
    return t.column(f.arg()).type().id() == dev.gpudf.columnar.TypeId.DECIMAL ? BigDecimal.ZERO
        : t.column(f.arg()).type().id() == dev.gpudf.columnar.TypeId.FLOAT64 ? (Object) 0.0 : (Object) 0L;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int compare(Object x, Object y) {
    if (x instanceof org.apache.arrow.vector.util.Text a && y instanceof org.apache.arrow.vector.util.Text b) {
      return java.util.Arrays.compareUnsigned(java.util.Arrays.copyOf(a.getBytes(), (int) a.getLength()),
          java.util.Arrays.copyOf(b.getBytes(), (int) b.getLength()));
    }
    return ((Comparable) x).compareTo(y);
  }
}
