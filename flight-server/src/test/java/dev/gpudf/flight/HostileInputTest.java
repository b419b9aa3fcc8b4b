package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The attacks of issue 24 against a server with a data directory, each of which once crashed it,
 * leaked its memory or touched files outside the directory; now each fails safely, with
 * INVALID_ARGUMENT, and the server goes on answering.
 */
class HostileInputTest {
  @TempDir
  Path dir;

  /** A string column whose second offset points {@code offset} bytes into a 3-byte data buffer. */
  private static VectorSchemaRoot badOffsets(BufferAllocator a, int offset) {
    VarCharVector v = new VarCharVector("s", a);
    v.allocateNew();
    for (String s : List.of("a", "b", "c")) {
      v.setSafe(v.getLastSet() + 1, s.getBytes(StandardCharsets.UTF_8));
    }
    v.setValueCount(3);
    v.getOffsetBuffer().setInt(4, offset);
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(v));
    root.setRowCount(3);
    return root;
  }

  private interface ServerTest {
    void run(FlightSqlClient client, Connection jdbc) throws Exception;
  }

  private void withServer(ServerTest test) throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(session.catalog(), dir, allocator);
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0).withDataDirectory(dir));
          BufferAllocator a = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
          FlightClient fc = FlightClient.builder(a, Location.forGrpcInsecure("localhost", server.port())).build();
          FlightSqlClient client = new FlightSqlClient(fc);
          Connection jdbc = DriverManager.getConnection("jdbc:arrow-flight-sql://localhost:" + server.port()
              + "/?useEncryption=false")) {
        test.run(client, jdbc);
      }
    }
  }

  private static String one(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      assertTrue(rs.next(), sql);
      return rs.getString(1);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {65_536, 2_048, -8})
  void ingestOfStringOffsetsOutsideTheirDataIsRefused(int offset) throws Exception {
    withServer((client, jdbc) -> {
      TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build();
      try (BufferAllocator a = new RootAllocator(); VectorSchemaRoot rows = badOffsets(a, offset)) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> client.executeIngest(rows,
            new FlightSqlClient.ExecuteIngestOptions("stolen", create, null, null, Map.of())));
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code(), e.getMessage());
        assertTrue(e.getMessage().contains("ingest into 'stolen', batch 1: column 's' is malformed"), e.getMessage());
      }
      SQLException none = assertThrows(SQLException.class, () -> one(jdbc, "SELECT * FROM stolen"));
      assertTrue(none.getMessage().contains("stolen"), none.getMessage());
      assertEquals("2", one(jdbc, "SELECT 1 + 1"));
    });
  }

  @Test
  void anIngestThatFailsInItsFourthBatchLeavesNothing() throws Exception {
    java.io.ByteArrayOutputStream ipc = new java.io.ByteArrayOutputStream();
    try (BufferAllocator a = new RootAllocator(); VectorSchemaRoot rows = badOffsets(a, 2);
        org.apache.arrow.vector.ipc.ArrowStreamWriter writer = new org.apache.arrow.vector.ipc.ArrowStreamWriter(rows, null,
            java.nio.channels.Channels.newChannel(ipc))) {
      writer.start();
      ((VarCharVector) rows.getVector(0)).getOffsetBuffer().setInt(4, 1);
      for (int b = 0; b < 3; b++) {
        writer.writeBatch();
      }
      ((VarCharVector) rows.getVector(0)).getOffsetBuffer().setInt(4, 65_536);
      writer.writeBatch();
      writer.end();
    }
    withServer((client, jdbc) -> {
      try (Statement s = jdbc.createStatement()) {
        s.executeUpdate("CREATE TABLE kept (s VARCHAR)");
        s.executeUpdate("INSERT INTO kept VALUES ('before')");
      }
      TableDefinitionOptions append = TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build();
      for (String table : List.of("kept", "fresh")) {
        try (BufferAllocator a = new RootAllocator();
            org.apache.arrow.vector.ipc.ArrowStreamReader reader = new org.apache.arrow.vector.ipc.ArrowStreamReader(
                new java.io.ByteArrayInputStream(ipc.toByteArray()), a)) {
          FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> client.executeIngest(reader,
              new FlightSqlClient.ExecuteIngestOptions(table, append, null, null, Map.of())));
          assertTrue(e.getMessage().contains("batch 4: column 's' is malformed"), e.getMessage());
        }
      }
      assertEquals("1", one(jdbc, "SELECT COUNT(*) FROM kept"));
      assertThrows(SQLException.class, () -> one(jdbc, "SELECT COUNT(*) FROM fresh"));
    });
    try (Stream<Path> files = Files.list(dir)) {
      // kept's file, and the append log of its INSERT: nothing of either failed ingest
      assertEquals(List.of("kept.arrow"), files.map(f -> f.getFileName().toString()).filter(f -> !f.matches("\\.kept\\.[0-9a-f]+\\.log"))
          .toList());
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession again = GpuSession.cpu(allocator)) {
      assertEquals(List.of("kept"), FileTables.loadDirectory(again.catalog(), dir, allocator));
      try (VectorSchemaRoot r = again.query("SELECT s FROM kept")) {
        assertEquals(1, r.getRowCount());
        assertEquals("before", r.getVector(0).getObject(0).toString());
      }
    }
  }

  @Test
  void boundParametersWithStringOffsetsOutsideTheirDataAreRefused() throws Exception {
    withServer((client, jdbc) -> {
      try (BufferAllocator a = new RootAllocator(); VectorSchemaRoot params = badOffsets(a, 65_536);
          FlightSqlClient.PreparedStatement p = client.prepare("SELECT CHAR_LENGTH(CAST(? AS VARCHAR))")) {
        p.setParameters(params);
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
          try (var stream = client.getStream(p.execute().getEndpoints().get(0).getTicket())) {
            while (stream.next()) {
              // the server must refuse before any row comes
            }
          }
        });
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code(), e.getMessage());
        assertTrue(e.getMessage().contains("bound parameters, batch 1: column 's' is malformed"), e.getMessage());
      }
      assertEquals("2", one(jdbc, "SELECT 1 + 1"));
    });
  }

  @Test
  void tableNamesNeverReachOutsideTheDataDirectory() throws Exception {
    String escape = "escape-" + System.nanoTime();
    String name = "/../../../" + escape;
    Path outside = dir.getParent().getParent().resolve(escape + ".arrow");
    withServer((client, jdbc) -> {
      try (Statement s = jdbc.createStatement()) {
        s.executeUpdate("CREATE TABLE \"" + name + "\" AS SELECT 1 AS a");
        s.executeUpdate("CREATE TABLE \"..\" AS SELECT 2 AS a");
        s.executeUpdate("CREATE TABLE \".hidden\" AS SELECT 3 AS a");
      }
    });
    assertFalse(Files.exists(outside), outside + " was written");
    assertFalse(Files.exists(Path.of("/" + escape + ".arrow")));
    try (Stream<Path> files = Files.list(dir)) {
      List<String> names = files.map(f -> f.getFileName().toString()).filter(f -> !f.startsWith(".super")).sorted().toList();
      assertEquals(List.of("%2E%2E.arrow", "%2Ehidden.arrow", "%2F%2E%2E%2F%2E%2E%2F%2E%2E%2F" + escape + ".arrow"), names);
    }
    // the next server finds the same names, and a DROP removes their files, and nothing else
    withServer((client, jdbc) -> {
      assertEquals("1", one(jdbc, "SELECT a FROM \"" + name + "\""));
      assertEquals("2", one(jdbc, "SELECT a FROM \"..\""));
      assertEquals("3", one(jdbc, "SELECT a FROM \".hidden\""));
      try (Statement s = jdbc.createStatement()) {
        s.executeUpdate("DROP TABLE \"" + name + "\"");
        s.executeUpdate("DROP TABLE \"..\"");
        s.executeUpdate("DROP TABLE \".hidden\"");
      }
    });
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(), files.filter(f -> !f.getFileName().toString().startsWith(".super")).toList());
    }
  }

  @Test
  void aTableThatCannotBeWrittenFailsItsOwnStatementOnly() throws Exception {
    Files.writeString(dir.resolve("seed.csv"), "k\n1\n");
    Files.createDirectories(dir.resolve("blocked.arrow").resolve("in-the-way"));
    withServer((client, jdbc) -> {
      try (Statement s = jdbc.createStatement()) {
        SQLException e = assertThrows(SQLException.class, () -> s.executeUpdate("CREATE TABLE blocked (x INTEGER)"));
        assertTrue(e.getMessage().contains("could not be written") && e.getMessage().contains("'blocked'"), e.getMessage());
        s.executeUpdate("CREATE TABLE fine AS SELECT 7 AS x");
        s.executeUpdate("INSERT INTO fine VALUES (8)");
        SQLException tooLong = assertThrows(SQLException.class, () -> s.executeUpdate("CREATE TABLE " + "x".repeat(81)
            + " (x INTEGER)"));
        assertTrue(tooLong.getMessage().contains("at most 80"), tooLong.getMessage());
        s.executeUpdate("DROP TABLE seed");
      }
    });
    try (RootAllocator allocator = new RootAllocator(); GpuSession again = GpuSession.cpu(allocator)) {
      assertEquals(List.of("fine"), FileTables.loadDirectory(again.catalog(), dir, allocator),
          "a dropped CSV table stays dropped, the later change was saved");
      try (VectorSchemaRoot r = again.query("SELECT SUM(x) FROM fine")) {
        assertEquals(15L, ((Number) r.getVector(0).getObject(0)).longValue());
      }
    }
  }
}
