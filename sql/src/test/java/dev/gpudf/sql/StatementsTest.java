package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

class StatementsTest {
  private static String rows(GpuSession s, String sql) {
    try (VectorSchemaRoot r = s.query(sql)) {
      return ResultText.format(r);
    }
  }

  @Test
  void createInsertSelectDrop() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      assertFalse(s.returnsRows("CREATE TABLE t (k INTEGER, name VARCHAR(20), price DECIMAL(10, 2), d DATE)"));
      assertTrue(s.returnsRows("SELECT 1"));
      assertEquals(0, s.update("CREATE TABLE t (k INTEGER, name VARCHAR(20), price DECIMAL(10, 2), d DATE)"));
      assertEquals("k | name | price | d\n", rows(s, "SELECT * FROM t"));
      assertEquals(2, s.update("INSERT INTO t VALUES (1, 'Zürich', 10.5, DATE '2024-02-29'), (2, NULL, 3, NULL)"));
      assertEquals(1, s.update("INSERT INTO t (name, k) VALUES ('only name', 3)"));
      assertEquals(1, s.update("INSERT INTO t VALUES (4, NULL, NULL, NULL)"));
      assertEquals(2, s.update("INSERT INTO t SELECT k + 10, name, price * 2, d FROM t WHERE price IS NOT NULL"));
      assertEquals("""
          k  | name      | price | d
          1  | Zürich    | 10.50 | 2024-02-29
          2  | NULL      | 3.00  | NULL
          3  | only name | NULL  | NULL
          4  | NULL      | NULL  | NULL
          11 | Zürich    | 21.00 | 2024-02-29
          12 | NULL      | 6.00  | NULL
          """, rows(s, "SELECT * FROM t ORDER BY k"));

      // computed columns keep the names the query gives them
      assertEquals("doubled | small\n2       | true\n", rows(s, "SELECT k * 2 AS doubled, k < 5 AS small FROM t WHERE k = 1"));
      assertEquals(0, s.update("CREATE TABLE big AS SELECT k, price FROM t WHERE k > 10"));
      assertEquals("k  | price\n11 | 21.00\n12 | 6.00\n", rows(s, "SELECT * FROM big ORDER BY k"));
      assertEquals(0, s.update("CREATE TABLE IF NOT EXISTS big (x INTEGER)"));
      assertEquals(0, s.update("DROP TABLE big"));
      assertEquals(0, s.update("DROP TABLE IF EXISTS big"));
      assertThrows(UserException.class, () -> s.update("DROP TABLE big"));
      assertThrows(UserException.class, () -> s.update("CREATE TABLE t (x INTEGER)"));
    }
  }

  /** Rows of every column type gpudf holds appended by INSERT ... SELECT (each value cast to its column's type, spelt in SQL). */
  @Test
  void insertsKeepEveryColumnType() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a);
        VectorSchemaRoot t = dev.gpudf.columnar.testing.TestTables.allTypes(a, 40, dev.gpudf.columnar.testing.TestTables.Nulls.every(3), 5)) {
      s.catalog().register("t", t);
      assertEquals(40, s.insert("t", t));
      assertEquals(80, s.update("INSERT INTO t SELECT * FROM t WHERE i64 IS NULL OR i64 IS NOT NULL"));
      String body = t.contentToTSVString().substring(t.contentToTSVString().indexOf('\n') + 1);
      try (VectorSchemaRoot all = s.query("SELECT * FROM t")) {
        assertEquals(t.contentToTSVString() + body + body + body, all.contentToTSVString());
      }
    }
  }

  /** String literals beyond Latin-1 (Calcite's default character set) are UTF-8, as Arrow's strings are. */
  @Test
  void literalsOfAnyScriptAreStrings() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      s.update("CREATE TABLE w (k INT, name VARCHAR)");
      assertEquals(3, s.update("INSERT INTO w VALUES (1, '日本'), (2, 'Ελλάδα'), (3, 'añb 😀')"));
      assertEquals("k | name\n2 | Ελλάδα\n", rows(s, "SELECT * FROM w WHERE name = 'Ελλάδα'"));
      assertEquals("?column? | char_length\n日本!      | 2\n", rows(s, "SELECT name || '!', CHAR_LENGTH(name) FROM w WHERE k = 1"));
      assertEquals("k\n3\n", rows(s, "SELECT k FROM w WHERE name LIKE '%😀'"));
      // an aggregate with FILTER or OVER is named after its function, as PostgreSQL names it
      assertEquals("count | max | count_1\n1     | 3   | 1\n", rows(s, "SELECT COUNT(*) FILTER (WHERE k > 1), MAX(k) FILTER (WHERE"
          + " name <> ''), COUNT(*) OVER () FROM w WHERE k = 3"));
    }
  }

  /**
   * Two scans of one table, or of one chunk of a chunked table, that read different columns are
   * different scans to the planner.
   */
  @Test
  void scansOfOneTableReadingDifferentColumnsStayApart() {
    for (int chunkRows : new int[] {Integer.MAX_VALUE, 2}) {
      try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
        s.catalog().maxChunkRows(chunkRows);
        s.update("CREATE TABLE t1 (a INT, b INT, c INT, d INT)");
        s.update("INSERT INTO t1 VALUES (1, 10, 300, 7), (2, 30, 100, 8)");
        s.update("INSERT INTO t1 VALUES (3, 20, 200, 9)");
        assertEquals(chunkRows == 2 ? 2 : 1, s.catalog().shape("t1").chunks());
        assertEquals("""
            a | count | count_1
            1 | 0     | 2
            2 | 2     | 0
            3 | 1     | 1
            """, rows(s, "SELECT a, (SELECT COUNT(*) FROM t1 AS x WHERE x.b < t1.b), "
            + "(SELECT COUNT(*) FROM t1 AS y WHERE y.c < t1.c) FROM t1 ORDER BY a"), "chunks of " + chunkRows);
      }
    }
  }

  /** Window functions and grouping sets over a chunked table see all of its chunks as one table. */
  @Test
  void windowsAndGroupingSetsSpanChunks() {
    for (int chunkRows : new int[] {Integer.MAX_VALUE, 2}) {
      try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
        s.catalog().maxChunkRows(chunkRows);
        s.update("CREATE TABLE t2 (g VARCHAR, v INT)");
        s.update("INSERT INTO t2 VALUES ('x', 1), ('y', 5), ('x', 3)");
        s.update("INSERT INTO t2 VALUES ('y', 2), ('x', 4)");
        assertEquals("""
            g | v | rn | total | run_sum
            x | 1 | 1  | 8     | 1
            x | 3 | 2  | 8     | 4
            x | 4 | 3  | 8     | 8
            y | 2 | 1  | 7     | 2
            y | 5 | 2  | 7     | 7
            """, rows(s, "SELECT g, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v) rn, SUM(v) OVER (PARTITION BY g) total, "
            + "SUM(v) OVER (PARTITION BY g ORDER BY v) run_sum FROM t2 ORDER BY g, v"), "chunks of " + chunkRows);
        assertEquals("""
            g    | total
            x    | 8
            y    | 7
            NULL | 15
            """, rows(s, "SELECT g, SUM(v) total FROM t2 GROUP BY ROLLUP(g) ORDER BY GROUPING(g), g"), "chunks of " + chunkRows);
      }
    }
  }

  @Test
  void badInsertsFailAndLoseNothing() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      s.update("CREATE TABLE t (k INTEGER, name VARCHAR)");
      s.update("INSERT INTO t VALUES (1, 'a')");
      assertThrows(UserException.class, () -> s.update("INSERT INTO t VALUES (1, 'a', 'extra')"));
      assertThrows(UserException.class, () -> s.update("INSERT INTO t (nope) VALUES (1)"));
      assertThrows(UserException.class, () -> s.update("INSERT INTO missing VALUES (1)"));
      assertThrows(GpudfException.class, () -> s.update("INSERT INTO t VALUES (2147483648 * 2, 'overflow')"));
      assertThrows(UserException.class, () -> s.update("CREATE TABLE u"));
      assertThrows(NotSupportedException.class, () -> s.update("CREATE TABLE u (k INTEGER, CHECK (k > 0))"));
      assertEquals("k | name\n1 | a\n", rows(s, "SELECT * FROM t"));
    }
  }

  /** NOT NULL, PRIMARY KEY (inline or as a constraint), UNIQUE and UNIQUE indexes hold on every insert. */
  @Test
  void constraintsAreKept() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      s.update("CREATE TABLE p (id INTEGER PRIMARY KEY, code VARCHAR(10) NOT NULL, alt INTEGER, UNIQUE (alt))");
      assertEquals(2, s.update("INSERT INTO p VALUES (1, 'a', NULL), (2, 'b', NULL)"));
      UserException dup = assertThrows(UserException.class, () -> s.update("INSERT INTO p VALUES (3, 'c', 7), (1, 'd', 8)"));
      assertTrue(dup.getMessage().contains("[1]") && dup.getMessage().contains("PRIMARY KEY"), dup.getMessage());
      UserException nul = assertThrows(UserException.class, () -> s.update("INSERT INTO p (id, alt) VALUES (4, 9)"));
      assertTrue(nul.getMessage().contains("'code'") && nul.getMessage().contains("NULL"), nul.getMessage());
      assertThrows(UserException.class, () -> s.update("INSERT INTO p (code) VALUES ('no id')"));
      assertEquals(1, s.update("INSERT INTO p VALUES (5, 'e', 7)"));
      assertThrows(UserException.class, () -> s.update("INSERT INTO p VALUES (6, 'f', 7)"));
      assertEquals("id | code | alt\n1  | a    | NULL\n2  | b    | NULL\n5  | e    | 7\n", rows(s, "SELECT * FROM p ORDER BY id"));
      // indexes change no result: recorded, names taken, UNIQUE ones checked now and later
      assertEquals(0, s.update("CREATE INDEX p_code ON p (code DESC, id)"));
      assertThrows(UserException.class, () -> s.update("CREATE INDEX p_code ON p (id)"));
      assertEquals(0, s.update("CREATE INDEX IF NOT EXISTS p_code ON p (id)"));
      assertThrows(UserException.class, () -> s.update("CREATE INDEX p_bad ON p (nope)"));
      s.update("INSERT INTO p VALUES (8, 'e', NULL)");
      assertThrows(UserException.class, () -> s.update("CREATE UNIQUE INDEX p_code_u ON p (code)"));
      assertEquals(0, s.update("CREATE UNIQUE INDEX p_alt_id ON p (alt, id)"));
      assertFalse(s.returnsRows("DROP INDEX p_code"));
      assertEquals(0, s.update("DROP INDEX p_code"));
      assertThrows(UserException.class, () -> s.update("DROP INDEX p_code"));
      assertEquals(0, s.update("DROP INDEX IF EXISTS p_code"));
      s.update("DROP TABLE p");
      s.update("CREATE TABLE p (id INTEGER)");
      assertEquals(2, s.update("INSERT INTO p VALUES (1), (1)"));
    }
  }
}
