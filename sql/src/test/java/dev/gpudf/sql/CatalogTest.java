package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tables of several chunks: how appended rows join or start chunks, and what a query over chunks reads. */
class CatalogTest {
  private RootAllocator allocator;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void close() {
    allocator.close();
  }

  /** Rows {@code first} .. {@code first + rows - 1} of (id BIGINT, s VARCHAR), each s {@code width} bytes of one letter. */
  private VectorSchemaRoot rows(long first, int rows, int width) {
    BigIntVector id = new BigIntVector("id", allocator);
    VarCharVector s = new VarCharVector("s", allocator);
    id.allocateNew(rows);
    s.allocateNew((long) rows * width, rows);
    byte[] bytes = new byte[width];
    for (int i = 0; i < rows; i++) {
      id.set(i, first + i);
      Arrays.fill(bytes, (byte) ('a' + (first + i) % 26));
      s.setSafe(i, bytes);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, s));
    root.setRowCount(rows);
    return root;
  }

  private void appendsJoinAndStartChunks(GpuSession s) {
    s.catalog().maxChunkRows(100);
    try (VectorSchemaRoot a = rows(0, 60, 3); VectorSchemaRoot b = rows(60, 30, 3); VectorSchemaRoot c = rows(90, 50, 3);
        VectorSchemaRoot d = rows(140, 0, 3)) {
      s.catalog().register("t", a);
      s.catalog().append("t", b);
      s.catalog().append("t", c);
      s.catalog().append("t", d);
    }
    assertEquals(List.of(90, 50), s.catalog().shape("t").chunkRows());
    // even ids have even letters only (a, c, .. y)
    try (VectorSchemaRoot r = s.query("SELECT COUNT(*), SUM(id), MIN(s), MAX(s), AVG(id) FROM t WHERE MOD(id, 2) = 0")) {
      assertEquals("70|4830|aaa|yyy|69.0", r.getVector(0).getObject(0) + "|" + r.getVector(1).getObject(0) + "|"
          + r.getVector(2).getObject(0) + "|" + r.getVector(3).getObject(0) + "|" + r.getVector(4).getObject(0));
    }
    // a join per chunk (the other side computed once), LEFT keeping each unmatched row once
    try (VectorSchemaRoot u = rows(0, 30, 1)) {
      s.catalog().register("u", u);
    }
    String plan = s.explain("SELECT t.id, u.s FROM t LEFT JOIN u ON t.id = u.id * 5");
    assertTrue(plan.matches("(?s).*GpuUnion.*GpuJoin.*chunk 0.*GpuJoin.*chunk 1.*"), plan);
    try (VectorSchemaRoot r = s.query("SELECT COUNT(*), COUNT(u.s), SUM(t.id) FROM t LEFT JOIN u ON t.id = u.id * 5")) {
      assertEquals("140|28|9730", r.getVector(0).getObject(0) + "|" + r.getVector(1).getObject(0) + "|"
          + r.getVector(2).getObject(0));
    }
    // the chunked side of a RIGHT or FULL join supplies NULLs: split, u's unmatched rows would
    // come once per chunk (u.id 0..29, matched where u.id * 5 < 140: 28 of 30)
    try (VectorSchemaRoot r = s.query("SELECT COUNT(*), COUNT(t.id) FROM t RIGHT JOIN u ON t.id = u.id * 5")) {
      assertEquals("30|28", r.getVector(0).getObject(0) + "|" + r.getVector(1).getObject(0));
    }
    try (VectorSchemaRoot r = s.query("SELECT COUNT(*), COUNT(t.id), COUNT(u.id) FROM t FULL JOIN u ON t.id = u.id * 5")) {
      assertEquals("142|140|30", r.getVector(0).getObject(0) + "|" + r.getVector(1).getObject(0) + "|"
          + r.getVector(2).getObject(0));
    }
    // rows of both chunks in one result, in chunk order
    try (VectorSchemaRoot r = s.query("SELECT id FROM t WHERE id BETWEEN 88 AND 91")) {
      assertEquals("[88, 89, 90, 91]", r.getVector(0).toString());
    }
  }

  @Test
  void appendsJoinTheLastChunkUntilItIsFullOnTheCpu() {
    try (GpuSession s = GpuSession.cpu(allocator)) {
      appendsJoinAndStartChunks(s);
    }
  }

  @RequiresGpu
  @Test
  void appendsJoinTheLastChunkUntilItIsFullOnTheGpu() {
    try (Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20); GpuSession s = GpuSession.gpu(gpu, allocator)) {
      appendsJoinAndStartChunks(s);
    }
  }

  private static String answer(GpuSession s, String sql) {
    try (VectorSchemaRoot r = s.query(sql)) {
      return ResultText.format(r);
    }
  }

  /** The first row of {@code sql}'s answer, its cells split by {@code |}. */
  private static String firstRow(GpuSession s, String sql) {
    return answer(s, sql).lines().skip(1).findFirst().orElseThrow().replaceAll("\\s*\\|\\s*", "|").strip();
  }

  /**
   * Past the device budget, columns spill to host memory and come back when a query reads them:
   * answers stay the same, a query brings back only the columns it reads, and a table no query
   * reads stays on the host.
   */
  @RequiresGpu
  @Test
  void columnsSpillPastTheDeviceBudgetAndComeBackWhenRead() {
    try (Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20); GpuSession s = GpuSession.gpu(gpu, allocator)) {
      s.catalog().maxChunkRows(2);
      s.update("CREATE TABLE t (k BIGINT NOT NULL, w VARCHAR, x DOUBLE)");
      s.update("INSERT INTO t VALUES (1, 'añb', 1.5), (2, NULL, NULL)");
      s.update("INSERT INTO t VALUES (3, 'z', 2.5), (4, '日本', NULL)");
      s.update("INSERT INTO t VALUES (5, NULL, 0.5)");
      s.update("CREATE TABLE u (v BIGINT)");
      s.update("INSERT INTO u VALUES (7), (NULL), (9)");
      assertEquals(List.of(2, 2, 1), s.catalog().shape("t").chunkRows());
      List<String> queries = List.of("SELECT k, w, x FROM t ORDER BY k", "SELECT COUNT(w), SUM(x), MAX(w) FROM t",
          "SELECT w FROM t WHERE k > 2 ORDER BY k", "SELECT SUM(k * v) FROM t, u");
      List<String> expected = queries.stream().map(q -> answer(s, q)).toList();
      assertEquals("3|4.5|日本", firstRow(s, queries.get(1)));
      Catalog.Residency whole = s.catalog().residency("t");
      assertTrue(whole.deviceBytes() > 0 && whole.spilledBytes() == 0, whole.toString());

      s.catalog().deviceBudget(0);
      assertEquals(0, s.catalog().residency().deviceBytes());
      assertTrue(s.catalog().residency("t").spilledBytes() > 0);
      assertEquals("16", firstRow(s, "SELECT SUM(v) FROM u"));
      assertEquals(0, s.catalog().residency("t").deviceBytes(), "t stays on the host while only u is read");
      assertTrue(s.catalog().residency("u").deviceBytes() > 0);
      assertEquals("4.5", firstRow(s, "SELECT SUM(x) FROM t"));
      long xOnly = s.catalog().residency("t").deviceBytes();
      assertTrue(xOnly > 0 && xOnly < whole.deviceBytes(), xOnly + " bytes of x back, of " + whole);
      for (int i = 0; i < queries.size(); i++) {
        assertEquals(expected.get(i), answer(s, queries.get(i)), queries.get(i));
      }
      // half the tables fit: every query, twice over, reads columns that spilled in between
      s.catalog().deviceBudget(s.catalog().residency().deviceBytes() / 2);
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < queries.size(); i++) {
          assertEquals(expected.get(i), answer(s, queries.get(i)), queries.get(i));
        }
      }
      assertThrows(UserException.class, () -> s.catalog().deviceBudget(-1));
    }
  }

  /**
   * A query that runs out of device memory while idle tables fill it runs again after they spill
   * to host memory; while another reader holds them, nothing can spill and the error stands.
   */
  @RequiresGpu
  @Test
  void aQueryOutOfDeviceMemorySpillsIdleTablesAndRunsAgain() {
    // 1 MiB pool chunks: a table's large buffers get chunks of their own, which go back whole
    try (Gpu gpu = Gpu.open(0, 256L << 20, 1L << 20); GpuSession s = GpuSession.gpu(gpu, allocator)) {
      s.catalog().deviceBudget(Long.MAX_VALUE);
      try (VectorSchemaRoot big = rows(0, 12_000_000, 0); VectorSchemaRoot u = rows(0, 4_000_000, 0)) {
        s.catalog().register("big", big);
        s.catalog().register("u", u);
      }
      // 4M groups: a hash table of 8M slots and the group columns, more than the ~64 MiB left
      String sql = "SELECT COUNT(*), SUM(c) FROM (SELECT id, COUNT(*) AS c FROM u GROUP BY id)";
      try (Table<?> held = s.catalog().acquire("big", 0, null)) {
        assertThrows(dev.gpudf.columnar.error.GpuOutOfMemoryException.class, () -> s.query(sql).close());
      }
      assertEquals(0, s.catalog().residency("big").spilledBytes(), "a table being read stays");
      assertEquals("4000000|4000000", firstRow(s, sql));
      assertTrue(s.catalog().residency("big").spilledBytes() > 0, s.catalog().residency("big").toString());
      assertEquals(0, s.catalog().residency("big").deviceBytes());
    }
  }

  /** INSERT into a table without keys appends its rows (a table with keys is checked whole, see StatementsTest). */
  @Test
  void insertsAppendChunks() {
    try (GpuSession s = GpuSession.cpu(allocator)) {
      s.catalog().maxChunkRows(3);
      s.update("CREATE TABLE v (k INT NOT NULL, w VARCHAR)");
      assertEquals(2, s.update("INSERT INTO v VALUES (1, 'a'), (2, NULL)"));
      assertEquals(2, s.update("INSERT INTO v SELECT k + 10, w FROM v"));
      assertThrows(UserException.class, () -> s.update("INSERT INTO v VALUES (NULL, 'x')"));
      assertEquals(List.of(2, 2), s.catalog().shape("v").chunkRows());
      try (VectorSchemaRoot r = s.query("SELECT SUM(k), COUNT(w) FROM v")) {
        assertEquals("26|2", r.getVector(0).getObject(0) + "|" + r.getVector(1).getObject(0));
      }
    }
  }

  @Test
  void badAppendsAreUserErrorsAndChangeNothing() {
    try (GpuSession s = GpuSession.cpu(allocator); VectorSchemaRoot a = rows(0, 5, 2)) {
      assertThrows(UserException.class, () -> s.catalog().append("missing", a));
      s.catalog().register("t", a);
      try (BigIntVector only = new BigIntVector("id", allocator); VectorSchemaRoot other = VectorSchemaRoot.of(only)) {
        UserException e = assertThrows(UserException.class, () -> s.catalog().append("t", other));
        assertTrue(e.getMessage().contains("column types"), e.getMessage());
      }
      assertEquals(List.of(5), s.catalog().shape("t").chunkRows());
      assertThrows(UserException.class, () -> s.catalog().maxChunkRows(0));
    }
  }

  /**
   * Two appends of 1.1 GB of strings each: together past a column's 2 GiB, so they stay two
   * chunks; aggregates read both, and a result that would put all the strings in one column is
   * a user error, not a wrong answer.
   */
  @Test
  void stringsPastTwoGibibytesStartANewChunk() {
    int rows = 1100;
    int width = 1 << 20;
    try (GpuSession s = GpuSession.cpu(allocator)) {
      try (VectorSchemaRoot a = rows(0, rows, width)) {
        s.catalog().register("big", a);
      }
      try (VectorSchemaRoot b = rows(rows, rows, width)) {
        s.catalog().append("big", b);
      }
      assertEquals(List.of(rows, rows), s.catalog().shape("big").chunkRows());
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*), MAX(id), SUM(CHAR_LENGTH(s)) FROM big")) {
        assertEquals("2200|2199|" + 2200L * width, r.getVector(0).getObject(0) + "|" + r.getVector(1).getObject(0) + "|"
            + r.getVector(2).getObject(0));
      }
      UserException e = assertThrows(UserException.class, () -> s.query("SELECT s FROM big").close());
      assertTrue(e.getMessage().contains("2 GiB"), e.getMessage());
    }
  }

  /** A file chunk's absent columns are named once each, however often a scan lists them, so none is filled twice. */
  @Test
  void aFileChunkListsEachAbsentColumnOnce() {
    CatalogChunk c = CatalogChunk.ofFile(List.of("a", "b", "c"), List.of(dev.gpudf.columnar.DataType.INT64,
        dev.gpudf.columnar.DataType.INT64, dev.gpudf.columnar.DataType.INT64), 3);
    assertEquals(List.of(1, 0, 2), Arrays.stream(c.absent(new int[] {1, 1, 0, 2, 0})).boxed().toList());
  }
}
