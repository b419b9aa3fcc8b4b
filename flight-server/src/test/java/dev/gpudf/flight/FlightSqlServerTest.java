package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.testing.DictionaryColumn;
import dev.gpudf.sql.GpuSession;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Flight SQL server through Apache's Flight SQL JDBC driver (and Flight SQL's own Java client
 * for ingest and an abandoned stream), on loopback, with basic auth: metadata, queries, prepared
 * statements with parameters, updates, ingest, errors, many concurrent clients, and no memory
 * left behind.
 */
class FlightSqlServerTest {
  private static final String USER = "ana";
  private static final String PASSWORD = "s3cret-Ünïcode";
  @TempDir
  static Path dir;
  private static BufferAllocator allocator;
  private static GpuSession session;
  private static GpudfFlightServer server;

  @BeforeAll
  static void start() throws Exception {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    session.update("CREATE TABLE items (id INTEGER NOT NULL, name VARCHAR, price DECIMAL(10, 2))");
    session.update("INSERT INTO items VALUES (1, 'apple', 1.25), (2, 'pear', 2.50), (3, 'fig', NULL), (4, 'kiwi', 0.75)");
    session.update("CREATE TABLE big AS SELECT * FROM (VALUES (0)) AS v(x)");
    Path users = dir.resolve("users");
    Files.writeString(users, "# test users\n" + Users.line(USER, PASSWORD.toCharArray()) + "\n", StandardCharsets.UTF_8);
    server = GpudfFlightServer.start(session, allocator, GpudfFlightServer.Options.plain("localhost", 0).withUsers(users));
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
    session.close();
    allocator.close();
  }

  private static String url(String password) {
    return "jdbc:arrow-flight-sql://localhost:" + server.port() + "/?useEncryption=false&user=" + USER + "&password="
        + java.net.URLEncoder.encode(password, StandardCharsets.UTF_8);
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(url(PASSWORD));
  }

  @Test
  void metadataListsTablesColumnsAndTypes() throws Exception {
    try (Connection c = connect()) {
      DatabaseMetaData md = c.getMetaData();
      List<String> tables = new ArrayList<>();
      try (ResultSet rs = md.getTables(null, null, "%", null)) {
        while (rs.next()) {
          tables.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
        }
      }
      assertTrue(tables.containsAll(List.of("items:TABLE", "big:TABLE")), tables.toString());
      try (ResultSet rs = md.getTables(null, null, "it%", null)) {
        assertTrue(rs.next());
        assertEquals("items", rs.getString("TABLE_NAME"));
        assertFalse(rs.next());
      }
      List<String> columns = new ArrayList<>();
      try (ResultSet rs = md.getColumns(null, null, "items", "%")) {
        while (rs.next()) {
          columns.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("DATA_TYPE"));
        }
      }
      assertEquals(List.of("id:" + java.sql.Types.INTEGER, "name:" + java.sql.Types.VARCHAR, "price:" + java.sql.Types.DECIMAL),
          columns);
      try (ResultSet rs = md.getTableTypes()) {
        assertTrue(rs.next());
        assertEquals("TABLE", rs.getString(1));
      }
      try (ResultSet rs = md.getPrimaryKeys(null, null, "items")) {
        assertFalse(rs.next());
      }
      assertEquals("gpudf", md.getDatabaseProductName());
    }
    // GetXdbcTypeInfo, which this JDBC driver does not ask for, through Flight SQL's own client
    try (BufferAllocator a = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
        FlightClient fc = FlightClient.builder(a, Location.forGrpcInsecure("localhost", server.port())).build();
        FlightSqlClient client = new FlightSqlClient(fc)) {
      CallOption auth = fc.authenticateBasicToken(USER, PASSWORD).orElseThrow();
      FlightInfo info = client.getXdbcTypeInfo(auth);
      List<String> names = new ArrayList<>();
      try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), auth)) {
        while (stream.next()) {
          VarCharVector v = (VarCharVector) stream.getRoot().getVector("type_name");
          for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
            names.add(v.getObject(i).toString());
          }
        }
      }
      assertTrue(names.containsAll(List.of("INTEGER", "VARCHAR", "DECIMAL", "TIMESTAMP")), names.toString());
    }
  }

  @Test
  void queriesAndPreparedStatementsWithParameters() throws Exception {
    try (Connection c = connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, name, price FROM items ORDER BY id")) {
      List<String> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getInt(1) + " " + rs.getString(2) + " " + rs.getBigDecimal(3));
      }
      assertEquals(List.of("1 apple 1.25", "2 pear 2.50", "3 fig null", "4 kiwi 0.75"), rows);
    }
    try (Connection c = connect();
        PreparedStatement p = c.prepareStatement("SELECT name FROM items WHERE id >= ? AND name <> ? ORDER BY id")) {
      assertEquals(2, p.getParameterMetaData().getParameterCount());
      p.setInt(1, 2);
      p.setString(2, "fig");
      assertEquals(List.of("pear", "kiwi"), strings(p.executeQuery()));
      p.setInt(1, 4);
      p.setString(2, "x");
      assertEquals(List.of("kiwi"), strings(p.executeQuery()));
    }
    try (Connection c = connect(); PreparedStatement p = c.prepareStatement("SELECT SUM(price) FROM items WHERE price > ?")) {
      p.setBigDecimal(1, new BigDecimal("1.00"));
      try (ResultSet rs = p.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(0, new BigDecimal("3.75").compareTo(rs.getBigDecimal(1)));
      }
    }
  }

  /** EXPLAIN through the Flight SQL JDBC driver: the plan's operators as rows, as a query's rows come back. */
  @Test
  void explainReturnsThePlanAsRows() throws Exception {
    try (Connection c = connect(); Statement s = c.createStatement()) {
      List<String> plan = strings(s.executeQuery("EXPLAIN SELECT name FROM items WHERE id > 1"));
      assertEquals(3, plan.size(), plan.toString());
      assertTrue(plan.get(0).startsWith("GpuProject(name=[$1])"), plan.toString());
      assertTrue(plan.get(2).contains("GpuTableScan(table=[[items"), plan.toString());
      assertEquals(plan, strings(s.executeQuery("EXPLAIN PLAN FOR SELECT name FROM items WHERE id > 1")));
      SQLException analyze = assertThrows(SQLException.class, () -> s.executeQuery("EXPLAIN ANALYZE SELECT 1"));
      assertTrue(analyze.getMessage().contains("EXPLAIN ANALYZE is not supported"), analyze.getMessage());
    }
  }

  private static List<String> strings(ResultSet rs) throws SQLException {
    try (rs) {
      List<String> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getString(1));
      }
      return out;
    }
  }

  @Test
  void updatesAndIngestThenQuery() throws Exception {
    try (Connection c = connect(); Statement s = c.createStatement()) {
      assertEquals(0, s.executeUpdate("CREATE TABLE notes (k INTEGER, v VARCHAR)"));
      assertEquals(2, s.executeUpdate("INSERT INTO notes VALUES (1, 'a'), (2, 'b')"));
      try (PreparedStatement p = c.prepareStatement("INSERT INTO notes VALUES (3, 'c')")) {
        assertEquals(1, p.executeUpdate());
      }
      assertEquals(List.of("a", "b", "c"), strings(s.executeQuery("SELECT v FROM notes ORDER BY k")));
      // parameters in an INSERT: one row, then a batch (each bound row inserted), then from a query
      try (PreparedStatement p = c.prepareStatement("INSERT INTO notes (v, k) VALUES (?, ?)")) {
        assertEquals(2, p.getParameterMetaData().getParameterCount());
        p.setString(1, "d");
        p.setInt(2, 4);
        assertEquals(1, p.executeUpdate());
        for (int k = 5; k <= 7; k++) {
          p.setString(1, k == 6 ? null : "é" + k);
          p.setInt(2, k);
          p.addBatch();
        }
        // the driver sends the batch as one DoPut and reports its total
        assertEquals(3, java.util.Arrays.stream(p.executeBatch()).sum());
      }
      try (PreparedStatement p = c.prepareStatement("INSERT INTO notes SELECT k + 10, v FROM notes WHERE k > ?")) {
        p.setInt(1, 6);
        assertEquals(1, p.executeUpdate());
      }
      assertEquals(java.util.Arrays.asList("a", "b", "c", "d", "é5", null, "é7", "é7"),
          strings(s.executeQuery("SELECT v FROM notes ORDER BY k")));
      // a large batch goes in as one statement; a batch that breaks a constraint leaves the table as it was
      assertEquals(0, s.executeUpdate("CREATE TABLE tally (id INTEGER NOT NULL, label VARCHAR)"));
      try (PreparedStatement p = c.prepareStatement("INSERT INTO tally VALUES (?, ?)")) {
        for (int i = 0; i < 5000; i++) {
          p.setInt(1, i);
          p.setString(2, "n" + i);
          p.addBatch();
        }
        long t0 = System.nanoTime();
        assertEquals(5000, java.util.Arrays.stream(p.executeBatch()).sum());
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(60), "5000 bound rows in one statement");
        p.setInt(1, 1);
        p.setString(2, "fine");
        p.addBatch();
        p.setNull(1, java.sql.Types.INTEGER);
        p.setString(2, "breaks NOT NULL");
        p.addBatch();
        SQLException notNull = assertThrows(SQLException.class, p::executeBatch);
        assertTrue(notNull.getMessage().contains("may not be NULL"), notNull.getMessage());
      }
      assertEquals(List.of("5000", "12497500"), List.of(strings(s.executeQuery("SELECT COUNT(*) FROM tally")).get(0),
          strings(s.executeQuery("SELECT SUM(id) FROM tally")).get(0)));
    }
    // ingest through Flight SQL's client: create, then append, then replace
    try (BufferAllocator a = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
        FlightClient fc = FlightClient.builder(a, Location.forGrpcInsecure("localhost", server.port())).build();
        FlightSqlClient client = new FlightSqlClient(fc);
        VectorSchemaRoot rows = people(a, 3)) {
      CallOption auth = fc.authenticateBasicToken(USER, PASSWORD).orElseThrow();
      TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build();
      assertEquals(3, client.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("people", create, null, null, Map.of()),
          auth));
      assertEquals(3, client.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("people", create, null, null, Map.of()),
          auth));
      TableDefinitionOptions replace = create.toBuilder()
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_REPLACE).build();
      assertEquals(3, client.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("people", replace, null, null, Map.of()),
          auth));
      TableDefinitionOptions fail = create.toBuilder()
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_FAIL).build();
      Exception e = assertThrows(Exception.class, () -> client.executeIngest(rows,
          new FlightSqlClient.ExecuteIngestOptions("people", fail, null, null, Map.of()), auth));
      assertTrue(e.getMessage().contains("already exists"), e.getMessage());
      // an INSERT with markers and no values bound (the JDBC driver refuses to send one)
      FlightSqlClient.PreparedStatement p = client.prepare("INSERT INTO notes VALUES (?, ?)", auth);
      Exception none = assertThrows(Exception.class, () -> p.executeUpdate(auth));
      assertTrue(none.getMessage().contains("none were bound"), none.getMessage());
      p.close(auth);
    }
    try (Connection c = connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*), COUNT(DISTINCT name), MAX(age) FROM people")) {
      assertTrue(rs.next());
      assertEquals(3, rs.getLong(1));
      assertEquals(3, rs.getLong(2));
      assertEquals(2, rs.getInt(3));
    }
  }

  @Test
  void ingestOfADictionaryEncodedColumnStoresItsValues() throws Exception {
    // what pyarrow sends for a pandas categorical: codes, and the dictionary beside them
    try (BufferAllocator a = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
        FlightClient fc = FlightClient.builder(a, Location.forGrpcInsecure("localhost", server.port())).build();
        DictionaryColumn colour = DictionaryColumn.of(a, "colour", 3, new String[] {"rouge", "vert", "青"},
            new int[] {2, 0, 1, 2, -1})) {
      CallOption auth = fc.authenticateBasicToken(USER, PASSWORD).orElseThrow();
      IntVector n = new IntVector("n", a);
      n.allocateNew(5);
      for (int i = 0; i < 5; i++) {
        n.set(i, i);
      }
      n.setValueCount(5);
      TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_FAIL).build();
      org.apache.arrow.flight.FlightDescriptor command = org.apache.arrow.flight.FlightDescriptor.command(
          com.google.protobuf.Any.pack(org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.newBuilder()
              .setTable("paints").setTableDefinitionOptions(create).build()).toByteArray());
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<org.apache.arrow.vector.FieldVector>of(colour.codes(), n))) {
        FlightClient.ClientStreamListener put = fc.startPut(command, root, colour.provider(),
            new org.apache.arrow.flight.AsyncPutListener(), auth);
        put.putNext();
        put.completed();
        put.getResult();
      }
    }
    try (Connection c = connect(); Statement s = c.createStatement()) {
      assertEquals(java.util.Arrays.asList("青", "rouge", "vert", "青", null),
          strings(s.executeQuery("SELECT colour FROM paints ORDER BY n")));
      assertEquals(List.of("1"), strings(s.executeQuery("SELECT COUNT(*) FROM paints WHERE colour = 'vert'")));
    }
  }

  /** {@code n} rows of (name VARCHAR, age INT): "person i", i. */
  static VectorSchemaRoot people(BufferAllocator a, int n) {
    VarCharVector name = new VarCharVector("name", a);
    IntVector age = new IntVector("age", a);
    name.allocateNew();
    age.allocateNew(n);
    for (int i = 0; i < n; i++) {
      name.setSafe(i, ("person " + i).getBytes(StandardCharsets.UTF_8));
      age.set(i, i);
    }
    name.setValueCount(n);
    age.setValueCount(n);
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(name, age));
    root.setRowCount(n);
    return root;
  }

  @Test
  void errorsReachTheClientAndTheServerStaysUp() throws Exception {
    assertThrows(SQLException.class, () -> DriverManager.getConnection(url("wrong")).createStatement()
        .executeQuery("SELECT 1"));
    try (Connection c = connect(); Statement s = c.createStatement()) {
      SQLException bad = assertThrows(SQLException.class, () -> s.executeQuery("SELEC nonsense"));
      assertTrue(bad.getMessage().toLowerCase().contains("selec"), bad.getMessage());
      SQLException missing = assertThrows(SQLException.class, () -> s.executeQuery("SELECT * FROM no_such_table"));
      assertTrue(missing.getMessage().contains("no_such_table") || missing.getMessage().contains("NO_SUCH_TABLE"),
          missing.getMessage());
      SQLException unsupported = assertThrows(SQLException.class,
          () -> s.executeQuery("SELECT COUNT(DISTINCT name) OVER (ORDER BY id) FROM items"));
      assertTrue(unsupported.getMessage().contains("not supported"), unsupported.getMessage());
      try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM items")) {
        assertTrue(rs.next());
        assertEquals(4, rs.getLong(1));
      }
    }
  }

  @Test
  void largeResultsStreamInBatchesToASlowReaderAndAnAbandonedStreamFreesItsMemory() throws Exception {
    int rows = 24 * ResultSender.BATCH_ROWS + 17;
    try (BufferAllocator a = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
        FlightClient fc = FlightClient.builder(a, Location.forGrpcInsecure("localhost", server.port())).build();
        FlightSqlClient client = new FlightSqlClient(fc);
        VectorSchemaRoot many = people(a, rows)) {
      CredentialCallOption auth = fc.authenticateBasicToken(USER, PASSWORD).orElseThrow();
      TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
          .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE).build();
      client.executeIngest(many, new FlightSqlClient.ExecuteIngestOptions("crowd", create, null, null, Map.of()), auth);

      // a reader that pauses fills the server's send window; the sender must resume once it reads
      FlightInfo slow = client.execute("SELECT name, age FROM crowd", auth);
      try (FlightStream stream = client.getStream(slow.getEndpoints().get(0).getTicket(), auth)) {
        assertTrue(stream.next());
        long seen = stream.getRoot().getRowCount();
        long ageSum = ageSum(stream.getRoot());
        Thread.sleep(1_000);
        long resumed = System.nanoTime();
        while (stream.next()) {
          seen += stream.getRoot().getRowCount();
          ageSum += ageSum(stream.getRoot());
        }
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumed);
        assertEquals(rows, seen);
        assertEquals((long) rows * (rows - 1) / 2, ageSum);
        assertTrue(waitedMs < 10_000, "the rest of the result took " + waitedMs + " ms after the reader resumed");
      }

      // read one batch of a multi-batch result, then walk away
      FlightInfo info = client.execute("SELECT name, age FROM crowd", auth);
      try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), auth)) {
        assertTrue(stream.next());
        assertEquals(ResultSender.BATCH_ROWS, stream.getRoot().getRowCount());
        stream.cancel("test walks away", null);
      }
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.allocatedBytes() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertEquals(0, server.allocatedBytes(), "result batches left on the server");
  }

  private static long ageSum(VectorSchemaRoot root) {
    IntVector age = (IntVector) root.getVector("age");
    long sum = 0;
    for (int i = 0; i < root.getRowCount(); i++) {
      sum += age.get(i);
    }
    return sum;
  }

  @Test
  void manyConcurrentClients() throws Exception {
    int clients = 32;
    int queries = 100;
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    long t0 = System.nanoTime();
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int k = 0; k < clients; k++) {
        int client = k;
        done.add(pool.submit(() -> {
          long sum = 0;
          try (Connection c = connect(); PreparedStatement p = c.prepareStatement("SELECT COUNT(*) FROM items WHERE id <= ?")) {
            for (int q = 0; q < queries; q++) {
              p.setInt(1, (client + q) % 4 + 1);
              try (ResultSet rs = p.executeQuery()) {
                rs.next();
                sum += rs.getLong(1);
              }
            }
          }
          return sum;
        }));
      }
      for (int k = 0; k < clients; k++) {
        long want = 0;
        for (int q = 0; q < queries; q++) {
          want += (k + q) % 4 + 1;
        }
        assertEquals(want, done.get(k).get(120, TimeUnit.SECONDS), "client " + k);
      }
    } finally {
      pool.shutdownNow();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    System.out.printf("FLIGHT %d clients x %d prepared queries in %.1f s (%.0f queries/s)%n", clients, queries, seconds,
        clients * queries / seconds);
    try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
      assertTrue(rs.next());
    }
  }
}
