package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
