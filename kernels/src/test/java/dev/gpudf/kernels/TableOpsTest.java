package dev.gpudf.kernels;

import static dev.gpudf.columnar.testing.TestTables.assertSameData;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.HeavyGpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Gather, filter, scatter, concat and slice over every type: each backend against the
 * row-at-a-time oracle ({@link ReferenceOps}). The GPU half runs where a device is present.
 */
class TableOpsTest {
  private static final List<Nulls> NULLS = List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL);
  private RootAllocator allocator;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void noLeaks() {
    allocator.close();
  }

  private VectorSchemaRoot mask(int rows, long seed, boolean withNulls) {
    BitVector m = new BitVector("keep", allocator);
    m.allocateNew(rows);
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < rows; i++) {
      if (withNulls && i % 5 == 0) {
        // a NULL over a true value: kept by nothing that reads the value bits alone
        m.set(i, 1);
        org.apache.arrow.vector.BitVectorHelper.unsetBit(m.getValidityBuffer(), i);
      } else {
        m.set(i, r.nextBoolean() ? 1 : 0);
      }
    }
    m.setValueCount(rows);
    // set bits past the last row, in both buffers: no row past the mask's is kept
    for (long b = (rows + 7) / 8; b < m.getDataBuffer().capacity(); b++) {
      m.getDataBuffer().setByte(b, 0xFF);
    }
    if (rows % 8 != 0) {
      m.getDataBuffer().setByte(rows / 8, m.getDataBuffer().getByte(rows / 8) | (0xFF << (rows % 8)));
      m.getValidityBuffer().setByte(rows / 8, m.getValidityBuffer().getByte(rows / 8) | (0xFF << (rows % 8)));
    }
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(m));
    root.setRowCount(rows);
    return root;
  }

  private VectorSchemaRoot ints(String name, int[] values) {
    IntVector v = new IntVector(name, allocator);
    v.allocateNew(values.length);
    for (int i = 0; i < values.length; i++) {
      v.set(i, values[i]);
    }
    v.setValueCount(values.length);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v));
    root.setRowCount(values.length);
    return root;
  }

  private static int[] keptRows(VectorSchemaRoot mask) {
    BitVector m = (BitVector) mask.getVector(0);
    List<Integer> kept = new ArrayList<>();
    for (int i = 0; i < m.getValueCount(); i++) {
      if (!m.isNull(i) && m.get(i) == 1) {
        kept.add(i);
      }
    }
    return kept.stream().mapToInt(Integer::intValue).toArray();
  }


  /** Thin adapters so one test body drives either backend. */
  abstract static class Ops implements AutoCloseable {
    abstract Object table(VectorSchemaRoot root);

    abstract VectorSchemaRoot back(Object table);

    abstract Object gather(Object table, VectorSchemaRoot map);

    abstract Object filter(Object table, VectorSchemaRoot mask);

    abstract Object scatter(Object source, VectorSchemaRoot indices, Object target);

    abstract Object concat(Object a, Object b, Object c);

    abstract Object slice(Object table, int offset, int length);

    abstract void close(Object table);

    @Override
    public void close() {}
  }

  final class CpuOps extends Ops {
    private final Exec exec;

    CpuOps(Exec exec) {
      this.exec = exec;
    }

    @Override
    Object table(VectorSchemaRoot root) {
      return HostTable.fromArrow(root);
    }

    @Override
    VectorSchemaRoot back(Object table) {
      return ((HostTable) table).toArrow(allocator);
    }

    private HostTable one(VectorSchemaRoot root) {
      return HostTable.fromArrow(root);
    }

    @Override
    Object gather(Object table, VectorSchemaRoot map) {
      try (HostTable m = one(map)) {
        return Gather.gather(exec, (HostTable) table, m.column(0));
      }
    }

    @Override
    Object filter(Object table, VectorSchemaRoot mask) {
      try (HostTable m = one(mask)) {
        return Filter.filter(exec, (HostTable) table, m.column(0));
      }
    }

    @Override
    Object scatter(Object source, VectorSchemaRoot indices, Object target) {
      try (HostTable m = one(indices)) {
        return Scatter.scatter(exec, (HostTable) source, m.column(0), (HostTable) target);
      }
    }

    @Override
    Object concat(Object a, Object b, Object c) {
      return Concat.concat(exec, (HostTable) a, (HostTable) b, (HostTable) c);
    }

    @Override
    Object slice(Object table, int offset, int length) {
      return Slice.slice(exec, (HostTable) table, offset, length);
    }

    @Override
    void close(Object table) {
      ((HostTable) table).close();
    }
  }

  final class GpuOps extends Ops {
    private final Gpu gpu;
    private final Exec exec;

    GpuOps() {
      gpu = Gpu.open(0, 4L << 30, 256L << 20);
      exec = Exec.onGpu(gpu, allocator);
    }

    @Override
    Object table(VectorSchemaRoot root) {
      return DeviceTable.fromArrow(gpu, root, exec.stream());
    }

    @Override
    VectorSchemaRoot back(Object table) {
      return ((DeviceTable) table).toArrow(allocator, exec.stream());
    }

    private DeviceTable one(VectorSchemaRoot root) {
      return DeviceTable.fromArrow(gpu, root, exec.stream());
    }

    @Override
    Object gather(Object table, VectorSchemaRoot map) {
      try (DeviceTable m = one(map)) {
        return Gather.gather(exec, (DeviceTable) table, m.column(0));
      }
    }

    @Override
    Object filter(Object table, VectorSchemaRoot mask) {
      try (DeviceTable m = one(mask)) {
        return Filter.filter(exec, (DeviceTable) table, m.column(0));
      }
    }

    @Override
    Object scatter(Object source, VectorSchemaRoot indices, Object target) {
      try (DeviceTable m = one(indices)) {
        return Scatter.scatter(exec, (DeviceTable) source, m.column(0), (DeviceTable) target);
      }
    }

    @Override
    Object concat(Object a, Object b, Object c) {
      return Concat.concat(exec, (DeviceTable) a, (DeviceTable) b, (DeviceTable) c);
    }

    @Override
    Object slice(Object table, int offset, int length) {
      return Slice.slice(exec, (DeviceTable) table, offset, length);
    }

    @Override
    void close(Object table) {
      ((DeviceTable) table).close();
    }

    @Override
    public void close() {
      exec.close();
      gpu.close(); // throws if a device buffer leaked
    }
  }

  private void exercise(Ops ops, int rows) {
    for (Nulls nulls : NULLS) {
      try (VectorSchemaRoot src = TestTables.allTypes(allocator, rows, nulls, rows + 3L)) {
        Object t = ops.table(src);
        try {
          checkGather(ops, src, t, rows);
          checkFilter(ops, src, t, rows);
          checkScatter(ops, src, t, rows);
          checkConcatAndSlice(ops, src, t, rows);
        } finally {
          ops.close(t);
        }
      }
    }
  }

  private void expect(Ops ops, VectorSchemaRoot expected, Object actual) {
    try (VectorSchemaRoot e = expected; VectorSchemaRoot a = ops.back(actual)) {
      // the null count each operator states (Arrow recounts the bits, so compare it apart)
      dev.gpudf.columnar.Table<?> t = (dev.gpudf.columnar.Table<?>) actual;
      for (int c = 0; c < t.columnCount(); c++) {
        assertEquals(e.getVector(c).getNullCount(), t.column(c).nullCount(), e.getVector(c).getName() + " null count");
      }
      assertSameData(e, a);
    } finally {
      ops.close(actual);
    }
  }

  private void checkGather(Ops ops, VectorSchemaRoot src, Object t, int rows) {
    SplittableRandom r = new SplittableRandom(rows);
    int[] map = new int[rows == 0 ? 0 : rows + 7];
    for (int i = 0; i < map.length; i++) {
      map[i] = r.nextInt(rows);
    }
    try (VectorSchemaRoot m = ints("map", map)) {
      expect(ops, ReferenceOps.rows(allocator, src, map), ops.gather(t, m));
    }
    try (VectorSchemaRoot m = ints("map", new int[] {0, rows})) {
      assertThrows(UserException.class, () -> ops.gather(t, m));
    }
  }

  private void checkFilter(Ops ops, VectorSchemaRoot src, Object t, int rows) {
    for (boolean maskNulls : new boolean[] {false, true}) {
      try (VectorSchemaRoot m = mask(rows, rows * 31L, maskNulls)) {
        expect(ops, ReferenceOps.rows(allocator, src, keptRows(m)), ops.filter(t, m));
      }
    }
    try (VectorSchemaRoot m = mask(rows + 1, 1, false)) {
      assertThrows(UserException.class, () -> ops.filter(t, m));
    }
  }

  private void checkScatter(Ops ops, VectorSchemaRoot src, Object t, int rows) {
    if (rows == 0) {
      return;
    }
    int k = Math.min(rows, 40);
    int[] idx = new int[k];
    SplittableRandom r = new SplittableRandom(k);
    for (int j = 0; j < k; j++) {
      idx[j] = r.nextInt(rows); // repeats happen: the last source row must win
    }
    int[] srcRows = new int[k];
    for (int j = 0; j < k; j++) {
      srcRows[j] = rows - 1 - j;
    }
    int[] expectedMap = new int[rows];
    for (int i = 0; i < rows; i++) {
      expectedMap[i] = i;
    }
    for (int j = 0; j < k; j++) {
      expectedMap[idx[j]] = rows + j;
    }
    try (VectorSchemaRoot sourceRows = ReferenceOps.rows(allocator, src, srcRows); VectorSchemaRoot m = ints("idx", idx)) {
      Object source = ops.table(sourceRows);
      try {
        expect(ops, ReferenceOps.rows(allocator, List.of(src, sourceRows), expectedMap), ops.scatter(source, m, t));
      } finally {
        ops.close(source);
      }
    }
  }

  private void checkConcatAndSlice(Ops ops, VectorSchemaRoot src, Object t, int rows) {
    int[] all = new int[3 * rows];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    expect(ops, ReferenceOps.rows(allocator, List.of(src, src, src), all), ops.concat(t, t, t));
    for (int[] range : new int[][] {{0, rows}, {Math.min(3, rows), Math.max(0, rows - 3)}, {rows / 2, rows - rows / 2},
        {Math.min(rows, 33), 0}}) {
      int[] map = new int[range[1]];
      for (int i = 0; i < map.length; i++) {
        map[i] = range[0] + i;
      }
      expect(ops, ReferenceOps.rows(allocator, src, map), ops.slice(t, range[0], range[1]));
    }
    assertThrows(UserException.class, () -> ops.slice(t, rows, 1));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 70_001})
  void cpuMatchesTheOracle(int rows) {
    try (Exec exec = Exec.onCpu(allocator); CpuOps ops = new CpuOps(exec)) {
      exercise(ops, rows);
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 70_001})
  void gpuMatchesTheOracle(int rows) {
    try (GpuOps ops = new GpuOps()) {
      exercise(ops, rows);
    }
  }

  /** {@link #gpuMatchesTheOracle} on millions of rows (grid-stride loops, many blocks), in the {@code gpu-heavy} suite. */
  @HeavyGpu
  @ParameterizedTest
  @ValueSource(ints = {1_000_003})
  void gpuMatchesTheOracleOnManyRows(int rows) {
    gpuMatchesTheOracle(rows);
  }

  /**
   * Two all-type tables side by side, 26 columns: more than one {@code gather_columns_kernel}
   * launch takes ({@link GpuGather#COLUMNS_PER_LAUNCH}), so a gather and a filter split them.
   */
  @ParameterizedTest
  @ValueSource(ints = {33, 70_001})
  void cpuGathersWideTables(int rows) {
    try (Exec exec = Exec.onCpu(allocator); CpuOps ops = new CpuOps(exec)) {
      exerciseWide(ops, rows);
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {33, 70_001})
  void gpuGathersWideTables(int rows) {
    try (GpuOps ops = new GpuOps()) {
      exerciseWide(ops, rows);
    }
  }

  private void exerciseWide(Ops ops, int rows) {
    try (VectorSchemaRoot a = TestTables.allTypes(allocator, rows, Nulls.every(3), 1);
        VectorSchemaRoot b = TestTables.allTypes(allocator, rows, Nulls.NONE, 2)) {
      List<FieldVector> vectors = new ArrayList<>();
      for (VectorSchemaRoot half : List.of(a, b)) {
        for (FieldVector v : half.getFieldVectors()) {
          org.apache.arrow.vector.util.TransferPair moved = v.getTransferPair(v.getName() + (half == a ? "" : "_2"),
              allocator);
          moved.transfer();
          vectors.add((FieldVector) moved.getTo());
        }
      }
      try (VectorSchemaRoot src = new VectorSchemaRoot(vectors)) {
        src.setRowCount(rows);
        assertEquals(2 * 13, src.getFieldVectors().size());
        Object t = ops.table(src);
        try {
          checkGather(ops, src, t, rows);
          checkFilter(ops, src, t, rows);
        } finally {
          ops.close(t);
        }
      }
    }
  }

  /** Long strings only: the gather copies each with a warp (short ones take a thread each, as above). */
  @RequiresGpu
  @Test
  void gpuGathersLongStrings() {
    String[] words = {"日本語のテキストを長く書いてみると三十バイトを超える", "x".repeat(90), "naïve café, Zürich and Ωmega 🚀"};
    int rows = 5000;
    org.apache.arrow.vector.VarCharVector v = new org.apache.arrow.vector.VarCharVector("s", allocator);
    v.allocateNew();
    for (int i = 0; i < rows; i++) {
      if (i % 7 == 3) {
        v.setNull(i);
      } else {
        v.setSafe(i, words[i % words.length].getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    v.setValueCount(rows);
    try (VectorSchemaRoot src = new VectorSchemaRoot(List.<FieldVector>of(v)); GpuOps ops = new GpuOps()) {
      Object t = ops.table(src);
      try {
        checkGather(ops, src, t, rows);
      } finally {
        ops.close(t);
      }
    }
  }

  /**
   * Gathers of few rows write their string offsets in one launch for up to {@link
   * GpuGather#STRINGS_PER_LAUNCH} columns; more rows take the scan. Eighteen string columns (two
   * launches), empty, short, non-ASCII and NULL strings, maps of 0, 1, 31, 4097 (more than one
   * step of the block), one row either side of {@link GpuGather#SMALL_GATHER_ROWS} and 100,003
   * (larger gathers' bytes go a warp per 32 rows, empty strings and a last partial warp among
   * them), a sliced table, and maps whose -1 is a row of NULLs (an outer join's missing side): the
   * CPU twin's rows.
   */
  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 4097, GpuGather.SMALL_GATHER_ROWS, GpuGather.SMALL_GATHER_ROWS + 1, 100_003})
  void gpuGathersManyStringColumnsOfFewRows(int mapRows) {
    String[] words = {"", "a", "naïve café", "日本語", "x".repeat(40), "Ωmega 🚀"};
    int rows = 300;
    List<FieldVector> vectors = new ArrayList<>();
    for (int c = 0; c < GpuGather.STRINGS_PER_LAUNCH + 2; c++) {
      org.apache.arrow.vector.VarCharVector v = new org.apache.arrow.vector.VarCharVector("s" + c, allocator);
      v.allocateNew();
      for (int i = 0; i < rows; i++) {
        if ((i + c) % 5 == 2) {
          v.setNull(i);
        } else {
          v.setSafe(i, (words[(i * 7 + c) % words.length] + c).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
      }
      v.setValueCount(rows);
      vectors.add(v);
    }
    SplittableRandom r = new SplittableRandom(mapRows);
    try (VectorSchemaRoot whole = new VectorSchemaRoot(vectors); VectorSchemaRoot src = TestTables.slice(whole, 5, rows - 9);
        Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20); Exec g = Exec.onGpu(gpu, allocator); Exec cpu = Exec.onCpu(allocator);
        HostTable host = HostTable.fromArrow(src); DeviceTable device = DeviceTable.fromArrow(gpu, src, g.stream())) {
      for (boolean holes : new boolean[] {false, true}) {
        int[] map = new int[mapRows];
        for (int i = 0; i < mapRows; i++) {
          map[i] = holes && i % 3 == 1 ? -1 : r.nextInt(src.getRowCount());
        }
        try (dev.gpudf.columnar.cuda.DeviceBuffer m = g.upload(map);
            HostTable want = CpuGather.tableWithNulls(allocator, host, map);
            DeviceTable got = GpuGather.table(g, device, m, mapRows, holes);
            VectorSchemaRoot w = want.toArrow(allocator); VectorSchemaRoot o = got.toArrow(allocator, g.stream())) {
          for (int c = 0; c < got.columnCount(); c++) {
            assertEquals(want.column(c).nullCount(), got.column(c).nullCount(), "null count of " + got.names().get(c));
          }
          assertSameData(w, o);
        }
      }
    }
  }

  @Test
  void badMapsAreUserErrors() {
    try (Exec exec = Exec.onCpu(allocator); VectorSchemaRoot src = TestTables.allTypes(allocator, 10, Nulls.NONE, 1);
        HostTable t = HostTable.fromArrow(src)) {
      assertThrows(UserException.class, () -> Gather.gather(exec, t, t.column("i64")));
      assertThrows(UserException.class, () -> Filter.filter(exec, t, t.column("i32")));
      assertEquals(10, t.rowCount());
    }
  }
}
