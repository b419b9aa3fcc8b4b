package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tables of several files: read_parquet / read_csv / read_arrow globs, and directories of files. */
class FileFunctionsTest {
  @TempDir
  Path dir;
  private RootAllocator allocator;
  private GpuSession session;

  @BeforeEach
  void open() throws Exception {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    FileTables.loadDirectory(session.catalog(), dir, allocator);
    Files.createDirectories(dir.resolve("sales/2024"));
    for (int part = 0; part < 3; part++) {
      session.update("COPY (SELECT " + part + " * 10 + x AS id, CAST(x AS DECIMAL(7, 2)) / 4 AS amount, 'p" + part
          + "' AS tag FROM (VALUES (1), (2), (3)) AS t(x)) TO '" + (part == 2 ? "sales/2024/" : "sales/") + "part-" + part
          + ".parquet'");
      session.update("COPY (SELECT " + part + " AS k, 'v" + part + "' AS v) TO 'kv-" + part + ".csv'");
    }
  }

  @AfterEach
  void close() {
    session.close();
    allocator.close();
  }

  private long count(GpuSession s, String sql) {
    try (VectorSchemaRoot r = s.query(sql)) {
      return ((Number) r.getVector(0).getObject(0)).longValue();
    }
  }

  @Test
  void globsAndDirectoriesAreTablesOfTheirFiles() {
    assertEquals(9, count(session, "SELECT COUNT(*) FROM read_parquet('sales/**.parquet')"));
    assertEquals(6, count(session, "SELECT COUNT(*) FROM read_parquet('sales/part-*.parquet') WHERE tag <> 'p2'"));
    assertEquals(108, count(session, "SELECT SUM(id) FROM read_parquet('sales/**.parquet')"));
    assertEquals(3, count(session, "select sum(k) from READ_CSV('kv-?.csv')"));
    // the same glob again is the same table while its files are unchanged; a new file joins it
    assertEquals(9, count(session, "SELECT COUNT(*) FROM read_parquet('sales/**.parquet')"));
    session.update("COPY (SELECT 99 AS id, CAST(1 AS DECIMAL(7, 2)) / 4 AS amount, 'p9' AS tag) TO 'sales/part-9.parquet'");
    assertEquals(10, count(session, "SELECT COUNT(*) FROM read_parquet('sales/**.parquet')"));
    session.update("CREATE TABLE copied AS SELECT * FROM read_parquet('sales/part-0.parquet')");
    assertEquals(3, count(session, "SELECT COUNT(*) FROM copied"));
    assertTrue(session.returnsRows("SELECT * FROM read_csv('kv-0.csv')"));
    // the same text inside a string or a comment is text: no file is read, nothing is rewritten
    try (VectorSchemaRoot r = session.query("SELECT 'read_parquet(''nothing-*.parquet'')' AS t -- read_csv('none.csv')\n"
        + "/* read_arrow('none.arrow') */")) {
      assertEquals("read_parquet('nothing-*.parquet')", r.getVector(0).getObject(0).toString());
    }
    // reopened, the directory is a table named after it
    try (RootAllocator a = new RootAllocator(); GpuSession back = GpuSession.cpu(a)) {
      assertTrue(FileTables.loadDirectory(back.catalog(), dir, a).contains("sales"));
      assertEquals(10, count(back, "SELECT COUNT(*) FROM sales"));
    }
  }

  @Test
  void hivePartitionDirectoriesAreColumns() throws Exception {
    for (String part : List.of("year=2024/month=01", "year=2024/month=02", "year=2025/month=__HIVE_DEFAULT_PARTITION__")) {
      Files.createDirectories(dir.resolve("events/" + part));
      session.update("COPY (SELECT x AS n FROM (VALUES (1), (2)) AS t(x)) TO 'events/" + part + "/p.parquet'");
    }
    // year and month are reserved words: quoted
    String q = "SELECT \"year\", \"month\", COUNT(*) AS c, SUM(n) AS s FROM %s WHERE \"year\" >= 2024"
        + " GROUP BY \"year\", \"month\" ORDER BY \"year\", \"month\" NULLS LAST";
    List<Object[]> want = List.of(new Object[] {2024L, 1L, 2L, 3L}, new Object[] {2024L, 2L, 2L, 3L},
        new Object[] {2025L, null, 2L, 3L});
    try (VectorSchemaRoot r = session.query(String.format(q, "read_parquet('events/**.parquet')"))) {
      assertEquals(null, TpchAnswers.difference(want, TpchAnswers.rows(r)));
    }
    try (RootAllocator a = new RootAllocator(); GpuSession back = GpuSession.cpu(a)) {
      FileTables.loadDirectory(back.catalog(), dir, a);
      try (VectorSchemaRoot r = back.query(String.format(q, "events"))) {
        assertEquals(null, TpchAnswers.difference(want, TpchAnswers.rows(r)));
      }
      assertEquals(1, count(back, "SELECT COUNT(*) FROM events WHERE \"year\" = 2025 AND \"month\" IS NULL AND n = 2"));
    }
    Files.createDirectories(dir.resolve("events/year=2026"));
    session.update("COPY (SELECT 1 AS n) TO 'events/year=2026/p.parquet'");
    UserException e = assertThrows(UserException.class,
        () -> session.query("SELECT COUNT(*) FROM read_parquet('events/**.parquet')").close());
    assertTrue(e.getMessage().contains("is partitioned by [year] where") && e.getMessage().contains("[year, month]"),
        e.getMessage());
  }

  @Test
  void filesOfAnotherSchemaAndPathsOutsideAreRefused() throws Exception {
    session.update("COPY (SELECT 'x' AS id) TO 'sales/odd.parquet'");
    UserException mismatch = assertThrows(UserException.class,
        () -> session.query("SELECT COUNT(*) FROM read_parquet('sales/*.parquet')").close());
    String m = mismatch.getMessage();
    assertTrue(m.contains("odd.parquet has [id STRING]") && m.contains("part-0.parquet has columns [id INT32, amount"), m);
    for (String glob : List.of("../*.parquet", "/etc/*", "nothing-*.parquet")) {
      UserException e = assertThrows(UserException.class,
          () -> session.query("SELECT COUNT(*) FROM read_parquet('" + glob + "')").close());
      assertTrue(e.getMessage().contains(glob), e.getMessage());
    }
    try (RootAllocator a = new RootAllocator(); GpuSession none = GpuSession.cpu(a)) {
      assertTrue(assertThrows(UserException.class, () -> none.query("SELECT * FROM read_csv('x.csv')").close())
          .getMessage().contains("has none"));
    }
  }
}
