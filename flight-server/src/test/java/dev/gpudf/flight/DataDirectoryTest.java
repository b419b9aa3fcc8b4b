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
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0).withDataDirectory(dir));
          Connection c = DriverManager.getConnection("jdbc:arrow-flight-sql://localhost:" + server.port()
              + "/?useEncryption=false");
          Statement s = c.createStatement()) {
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
}
