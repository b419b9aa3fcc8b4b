package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code COPY ... TO} round trips through every format, and the paths it refuses. */
class CopyToTest {
  private static final String ROWS = "SELECT * FROM (VALUES (1, 'a,b', DATE '2024-02-29', CAST(1.50 AS DECIMAL(7, 2))),"
      + " (2, 'say \"hi\"', NULL, CAST(-0.01 AS DECIMAL(7, 2))), (3, NULL, DATE '1969-12-31', NULL),"
      + " (4, 'Zürich\nline', DATE '2000-01-01', CAST(12345.67 AS DECIMAL(7, 2)))) AS t(id, s, d, m)";

  @TempDir
  Path dir;
  private RootAllocator allocator;
  private GpuSession session;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    FileTables.loadDirectory(session.catalog(), dir, allocator);
  }

  @AfterEach
  void close() {
    session.close();
    allocator.close();
  }

  private List<Object[]> rows(GpuSession s, String sql) {
    try (VectorSchemaRoot r = s.query(sql)) {
      return TpchAnswers.rows(r);
    }
  }

  @Test
  void everyFormatReadsBackTheRowsItWrote() throws Exception {
    List<Object[]> want = rows(session, ROWS + " ORDER BY id");
    assertEquals(4, session.update("COPY (" + ROWS + ") TO 'out.parquet' (FORMAT parquet)"));
    assertEquals(4, session.update("copy (" + ROWS + ") to 'ipc.arrow'"));
    assertEquals(4, session.update("COPY (" + ROWS + ") TO 'sub.csv' (FORMAT CSV);"));
    try (RootAllocator a = new RootAllocator(); GpuSession back = GpuSession.cpu(a)) {
      FileTables.loadDirectory(back.catalog(), dir, a);
      for (String t : List.of("\"out\"", "ipc", "sub")) {
        List<Object[]> got = rows(back, "SELECT * FROM " + t + " ORDER BY id");
        if (t.equals("sub")) {
          // CSV keeps no types: read back, each column is typed by its values
          assertEquals(4, got.size());
          assertEquals("a,b", got.get(0)[1].toString());
          assertEquals("say \"hi\"", got.get(1)[1].toString());
          assertNull(got.get(2)[1]);
          assertEquals("Zürich\nline", got.get(3)[1].toString());
          assertEquals(java.time.LocalDate.parse("2024-02-29").toEpochDay(), ((Number) got.get(0)[2]).longValue(),
              "typed DATE again by its values");
          assertEquals("-0.01", got.get(1)[3].toString());
        } else {
          assertNull(TpchAnswers.difference(want, got), t);
        }
      }
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of("ipc.arrow", "out.parquet", "sub.csv"), files.map(f -> f.getFileName().toString()).sorted().toList(),
          "no temporary file is left");
    }
  }

  @Test
  void aTableCopiesAndATargetIsReplacedWhole() throws Exception {
    session.update("CREATE TABLE t AS " + ROWS);
    Files.writeString(dir.resolve("t.csv"), "old\n1\n2\n3\n4\n5\n6\n");
    assertEquals(4, session.update("COPY t TO 't.csv'"));
    assertTrue(Files.readString(dir.resolve("t.csv")).startsWith("id,s,d,m\r\n1,\"a,b\",2024-02-29,1.50\r\n"),
        Files.readString(dir.resolve("t.csv")));
  }

  @Test
  void pathsOutsideTheDataDirectoryAndUnknownFormatsAreRefused(@TempDir Path elsewhere) throws Exception {
    Files.createSymbolicLink(dir.resolve("out"), elsewhere);
    for (String target : List.of("../x.csv", elsewhere.resolve("x.csv").toString(), "out/x.csv", "nodir/x.csv", "", ".")) {
      UserException e = assertThrows(UserException.class, () -> session.update("COPY (SELECT 1) TO '" + target + "'"));
      assertTrue(e.getMessage().contains("cannot write") || e.getMessage().contains("file name"), target + ": " + e.getMessage());
    }
    try (Stream<Path> files = Files.list(elsewhere)) {
      assertFalse(files.findAny().isPresent(), "nothing written outside");
    }
    assertEquals("COPY writes FORMAT parquet, csv or arrow, not json",
        assertThrows(UserException.class, () -> session.update("COPY (SELECT 1) TO 'x.json' (FORMAT json)")).getMessage());
    assertTrue(assertThrows(UserException.class, () -> session.update("COPY (SELECT 1) TO 'x.txt'")).getMessage()
        .contains("name the format"));
    try (RootAllocator a = new RootAllocator(); GpuSession none = GpuSession.cpu(a)) {
      assertTrue(assertThrows(UserException.class, () -> none.update("COPY (SELECT 1) TO 'x.csv'")).getMessage()
          .contains("has none"));
    }
    assertFalse(session.returnsRows("COPY (SELECT 1) TO 'x.csv'"));
  }
}
