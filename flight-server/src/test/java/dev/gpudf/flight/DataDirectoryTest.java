package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tables changed through a server with a data directory are there again for the next server. */
class DataDirectoryTest {
  @Test
  void changesOutliveTheServer(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("seed.csv"), "k,v\n1,a\n2,b\n");
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(session.catalog(), dir, allocator);
      try (Served served = serve(session, allocator, dir)) {
        Statement s = served.statement();
        assertFalse(Files.exists(dir.resolve("seed.arrow")), "loading writes nothing");
        s.executeUpdate("CREATE TABLE made (x INTEGER, y VARCHAR)");
        s.executeUpdate("INSERT INTO made VALUES (1, 'one'), (2, 'två')");
        s.executeUpdate("INSERT INTO seed VALUES (3, 'c')");
        s.executeUpdate("CREATE TABLE doomed (x INTEGER)");
        assertTrue(Files.exists(dir.resolve("doomed.arrow")));
        s.executeUpdate("DROP TABLE doomed");
      }
      assertFalse(Files.exists(dir.resolve("doomed.arrow")), "a dropped table's file is removed");
      assertFalse(Files.exists(dir.resolve("seed.csv")), "a changed CSV table is superseded by its .arrow file");
      assertTrue(Files.exists(dir.resolve(".superseded").resolve("seed.csv")));
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession again = GpuSession.cpu(allocator)) {
      assertEquals(List.of("made", "seed"), FileTables.loadDirectory(again.catalog(), dir, allocator).stream().sorted().toList());
      try (VectorSchemaRoot r = again.query("SELECT y FROM made ORDER BY x")) {
        assertEquals("[one, två]", List.of(r.getVector(0).getObject(0).toString(), r.getVector(0).getObject(1).toString())
            .toString());
      }
      try (VectorSchemaRoot r = again.query("SELECT COUNT(*) FROM seed")) {
        assertEquals(3L, r.getVector(0).getObject(0));
      }
    }
  }

  /**
   * An INSERT leaves the table's file as it was and adds a batch to its append log; a log that
   * the file does not name (left by a crash after a rewrite) is never applied, and the next
   * server removes it; a log grown past its file folds into a rewritten file.
   */
  @Test
  void insertsAppendToALogAndAStaleLogIsNeverApplied(@TempDir Path dir) throws Exception {
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < 50; i++) {
      values.append(i == 0 ? "" : ", ").append("(").append(i).append(", '").append("p".repeat(100)).append("')");
    }
    Path file = dir.resolve("big.arrow");
    byte[] before;
    Path log;
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(session.catalog(), dir, allocator);
      try (Served served = serve(session, allocator, dir)) {
        Statement s = served.statement();
        s.executeUpdate("CREATE TABLE big AS SELECT * FROM (VALUES " + values + ") AS v(x, pad)");
        before = Files.readAllBytes(file);
        for (int i = 0; i < 3; i++) {
          s.executeUpdate("INSERT INTO big VALUES (" + (100 + i) + ", 'q')");
        }
        assertEquals(-1, java.util.Arrays.mismatch(before, Files.readAllBytes(file)), "an INSERT does not rewrite the file");
        try (java.util.stream.Stream<Path> logs = Files.list(dir)) {
          List<Path> found = logs.filter(f -> f.getFileName().toString().matches("\\.big\\.[0-9a-f]+\\.log")).toList();
          assertEquals(1, found.size(), found.toString());
          log = found.get(0);
        }
      }
    }
    Path stale = dir.resolve(".big.abc.log");
    Files.copy(log, stale);
    try (RootAllocator allocator = new RootAllocator(); GpuSession again = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(again.catalog(), dir, allocator);
      try (VectorSchemaRoot r = again.query("SELECT COUNT(*), SUM(x) FROM big")) {
        assertEquals(53L, r.getVector(0).getObject(0), "the file's rows and the log's, the stale log's not");
        assertEquals(1225L + 303L, ((Number) r.getVector(1).getObject(0)).longValue());
      }
      try (Served served = serve(again, allocator, dir)) {
        Statement s = served.statement();
        assertFalse(Files.exists(stale), "the server removes a log its file does not name");
        // enough appends to outgrow the file: it is written whole again, with a fresh log
        for (int i = 0; i < 40; i++) {
          s.executeUpdate("INSERT INTO big VALUES (" + (200 + i) + ", '" + "r".repeat(200) + "')");
        }
        assertTrue(java.util.Arrays.mismatch(before, Files.readAllBytes(file)) >= 0, "the file was rewritten");
      }
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession third = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(third.catalog(), dir, allocator);
      try (VectorSchemaRoot r = third.query("SELECT COUNT(*) FROM big")) {
        assertEquals(93L, r.getVector(0).getObject(0));
      }
    }
  }

  /** A server over {@code session} writing to {@code dir}, with a client connected. */
  private record Served(GpudfFlightServer server, Connection connection, Statement statement) implements AutoCloseable {
    @Override
    public void close() throws Exception {
      try (server; connection; statement) {
        // closed in reverse order: statement, connection, server
      }
    }
  }

  private static Served serve(GpuSession session, RootAllocator allocator, Path dir) throws Exception {
    GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
        GpudfFlightServer.Options.plain("localhost", 0).withDataDirectory(dir));
    try {
      Connection c = DriverManager.getConnection("jdbc:arrow-flight-sql://localhost:" + server.port() + "/?useEncryption=false");
      return new Served(server, c, c.createStatement());
    } catch (SQLException | RuntimeException e) {
      server.close();
      throw e;
    }
  }
}
