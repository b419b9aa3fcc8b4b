package dev.gpudf.sql.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpudfDriverTest {
  @TempDir Path dir;
  String url;

  @BeforeEach
  void writeTables() throws Exception {
    Files.writeString(dir.resolve("orders.csv"), """
        o_id,o_price,o_ratio,o_date,o_name
        1,10.50,5e-1,2024-01-02,"a, b"
        2,,1.25,2024-02-29,Zürich 東京
        3,7.25,,1969-12-31,
        """);
    Files.writeString(dir.resolve("nation.csv"), "n_key,n_name\n0,ALGERIA\n1,ARGENTINA\n");
    url = "jdbc:gpudf:path=" + dir + ";backend=cpu";
  }

  /**
   * {@code Statement.cancel} from another thread stops the statement's running query at its next
   * operator, the statement then runs the next query, and {@code setQueryTimeout} stops a query
   * past it. The slow query is 40 cross joins of 2,000 rows, about 15 s on a 2-core host.
   */
  @Test
  void cancelAndQueryTimeoutStopARunningQuery() throws Exception {
    StringBuilder csv = new StringBuilder("x\n");
    for (int i = 0; i < 2_000; i++) {
      csv.append(i).append('\n');
    }
    Files.writeString(dir.resolve("t.csv"), csv);
    StringBuilder slow = new StringBuilder("SELECT COUNT(*) FROM (");
    for (int i = 0; i < 40; i++) {
      slow.append(i == 0 ? "" : " UNION ALL ").append("SELECT a.x FROM t a, t b WHERE MOD(a.x * b.x + ").append(i)
          .append(", 97) = 1");
    }
    String query = slow.append(") AS u").toString();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      java.util.concurrent.Future<Boolean> run = pool.submit(() -> {
        try (ResultSet rs = s.executeQuery(query)) {
          return rs.next();
        }
      });
      Thread.sleep(1_500);
      long cancelled = System.nanoTime();
      s.cancel();
      java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> run.get(60, java.util.concurrent.TimeUnit.SECONDS));
      long ms = (System.nanoTime() - cancelled) / 1_000_000;
      assertTrue(ms < 5_000, "stopped " + ms + " ms after the cancel");
      assertTrue(e.getCause() instanceof SQLException && e.getCause().getMessage().contains("the query was cancelled"),
          String.valueOf(e.getCause()));
      try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
        assertTrue(rs.next());
        assertEquals(2_000, rs.getLong(1));
      }
      s.setQueryTimeout(1);
      long started = System.nanoTime();
      SQLException late = assertThrows(SQLException.class, () -> s.executeQuery(query).close());
      assertTrue(late.getMessage().contains("time limit of 1 s"), late.getMessage());
      assertTrue(System.nanoTime() - started < 6_000_000_000L, "the timed-out query ran on");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void driverIsFoundThroughServiceLoading() throws SQLException {
    assertTrue(DriverManager.getDriver(url) instanceof GpudfDriver);
  }

  @Test
  void everyTypeComesBackThroughTheResultSet() throws SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT o_id, o_price, o_ratio, o_date, o_name, o_id > 1 AS big "
            + "FROM orders ORDER BY o_id")) {
      ResultSetMetaData md = rs.getMetaData();
      assertEquals(6, md.getColumnCount());
      assertEquals(List.of(Types.BIGINT, Types.DECIMAL, Types.DOUBLE, Types.DATE, Types.VARCHAR, Types.BOOLEAN),
          List.of(md.getColumnType(1), md.getColumnType(2), md.getColumnType(3), md.getColumnType(4),
              md.getColumnType(5), md.getColumnType(6)));
      assertEquals("o_price", md.getColumnLabel(2));
      assertEquals(2, md.getScale(2));

      assertTrue(rs.next());
      assertEquals(1L, rs.getLong(1));
      assertEquals(new BigDecimal("10.50"), rs.getBigDecimal(2));
      assertEquals(0.5, rs.getDouble(3));
      assertEquals(LocalDate.of(2024, 1, 2), rs.getDate(4).toLocalDate());
      assertEquals("2024-01-02", rs.getString(4));
      assertEquals("a, b", rs.getString(5));
      assertFalse(rs.getBoolean(6));

      assertTrue(rs.next());
      assertNull(rs.getBigDecimal("o_price"));
      assertTrue(rs.wasNull());
      assertEquals(LocalDate.of(2024, 2, 29), rs.getDate("o_date").toLocalDate());
      assertEquals("Zürich 東京", rs.getString("o_name"));
      assertTrue(rs.getBoolean("big"));

      assertTrue(rs.next());
      assertEquals(0.0, rs.getDouble(3));
      assertTrue(rs.wasNull());
      assertEquals("1969-12-31", rs.getString(4));
      assertNull(rs.getString(5));
      assertFalse(rs.next());
    }
  }

  @Test
  void aggregatesAndJoinsMatchTheSession() throws SQLException {
    String sql = "SELECT n_name, COUNT(*) AS n, SUM(o_price) AS total FROM orders JOIN nation ON o_id - 1 = n_key "
        + "GROUP BY n_name ORDER BY n_name";
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      List<String> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(rs.getString(1) + "|" + rs.getLong(2) + "|" + rs.getBigDecimal(3));
      }
      assertEquals(List.of("ALGERIA|1|10.50", "ARGENTINA|1|null"), rows);
    }
  }

  @Test
  void preparedStatementsRunAgainAndHonourMaxRows() throws SQLException {
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement p = c.prepareStatement("SELECT o_id FROM orders ORDER BY o_id DESC")) {
      assertEquals(Types.BIGINT, p.getMetaData().getColumnType(1));
      for (int run = 0; run < 2; run++) {
        try (ResultSet rs = p.executeQuery()) {
          List<Long> ids = new ArrayList<>();
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
          assertEquals(List.of(3L, 2L, 1L), ids);
        }
      }
      try (Statement s = c.createStatement()) {
        s.setMaxRows(2);
        try (ResultSet rs = s.executeQuery("SELECT o_id FROM orders")) {
          int n = 0;
          while (rs.next()) {
            n++;
          }
          assertEquals(2, n);
        }
      }
    }
  }

  @Test
  void parametersBindToTheCachedPlan() throws SQLException {
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement p = c.prepareStatement(
            "SELECT o_name FROM orders WHERE o_id >= ? AND o_date < ? AND o_price IS DISTINCT FROM ? ORDER BY o_id")) {
      assertEquals(3, p.getParameterMetaData().getParameterCount());
      assertEquals(Types.BIGINT, p.getParameterMetaData().getParameterType(1));
      assertEquals(Types.DATE, p.getParameterMetaData().getParameterType(2));
      p.setLong(1, 2);
      p.setDate(2, java.sql.Date.valueOf("2024-03-01"));
      p.setBigDecimal(3, new BigDecimal("10.50"));
      assertEquals(java.util.Arrays.asList("Zürich 東京", null), strings(p));
      p.setLong(1, 1);
      p.setDate(2, java.sql.Date.valueOf("2024-02-01"));
      p.setBigDecimal(3, new BigDecimal("7.25"));
      assertEquals(List.of("a, b"), strings(p));
      p.setNull(3, Types.DECIMAL);
      assertEquals(java.util.Arrays.asList("a, b", null), strings(p));
      p.setMaxRows(1);
      assertEquals(1, strings(p).size());
    }
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement p = c.prepareStatement("SELECT COUNT(*) FROM orders WHERE o_name = ?")) {
      p.setString(1, "a, b");
      try (ResultSet rs = p.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(1, rs.getLong(1));
      }
      p.setString(1, "nobody");
      try (ResultSet rs = p.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(0, rs.getLong(1));
      }
    }
  }

  private static List<String> strings(PreparedStatement p) throws SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = p.executeQuery()) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  @Test
  void ddlAndInsertsThroughStatements() throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:gpudf:backend=cpu"); Statement s = c.createStatement()) {
      assertEquals(0, s.executeUpdate("CREATE TABLE t (k INTEGER, name VARCHAR)"));
      assertEquals(2, s.executeUpdate("INSERT INTO t VALUES (1, 'eins'), (2, 'zwei')"));
      try (PreparedStatement p = c.prepareStatement("INSERT INTO t SELECT k + 2, name FROM t")) {
        assertEquals(2, p.executeUpdate());
      }
      assertFalse(s.execute("DROP TABLE IF EXISTS nothing"));
      try (ResultSet rs = s.executeQuery("SELECT SUM(k), COUNT(DISTINCT name) FROM t")) {
        assertTrue(rs.next());
        assertEquals(10, rs.getLong(1));
        assertEquals(2, rs.getLong(2));
      }
      try (ResultSet rs = c.getMetaData().getTables(null, null, "t", null)) {
        assertTrue(rs.next());
      }
    }
  }

  @Test
  void databaseMetaDataListsTablesAndColumns() throws SQLException {
    try (Connection c = DriverManager.getConnection(url)) {
      List<String> tables = new ArrayList<>();
      try (ResultSet rs = c.getMetaData().getTypeInfo()) {
        java.util.Map<String, Integer> types = new java.util.HashMap<>();
        while (rs.next()) {
          types.put(rs.getString("TYPE_NAME"), rs.getInt("DATA_TYPE"));
        }
        assertEquals(java.sql.Types.DECIMAL, types.get("DECIMAL"));
        assertEquals(java.sql.Types.VARCHAR, types.get("VARCHAR"));
        assertEquals(11, types.size(), types.toString());
      }
      try (ResultSet rs = c.getMetaData().getTables(null, null, "%", null)) {
        while (rs.next()) {
          tables.add(rs.getString("TABLE_NAME") + ":" + rs.getString("TABLE_TYPE"));
        }
      }
      assertEquals(List.of("nation:TABLE", "orders:TABLE"), tables);
      List<String> columns = new ArrayList<>();
      try (ResultSet rs = c.getMetaData().getColumns(null, null, "ord%", "o\\_%")) {
        while (rs.next()) {
          columns.add(rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("ORDINAL_POSITION"));
        }
      }
      assertEquals(List.of("o_id BIGINT 1", "o_price DECIMAL 2", "o_ratio DOUBLE 3", "o_date DATE 4",
          "o_name VARCHAR 5"), columns);
    }
  }

  @Test
  void errorsAreSqlExceptionsThatSayWhatIsWrong() throws SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      SQLException e = assertThrows(SQLException.class, () -> s.executeQuery("SELECT nope FROM orders"));
      assertTrue(e.getMessage().contains("Column 'nope' not found"), e.getMessage());
      try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM orders")) {
        assertTrue(rs.next());
        assertEquals(3, rs.getInt(1));
      }
    }
    try (Connection c = DriverManager.getConnection(url)) {
      SQLException limit = assertThrows(SQLException.class, () -> c.prepareStatement("SELECT o_id FROM orders LIMIT ?"));
      // Avatica's message names the statement; the cause says why
      assertTrue(limit.getCause().getMessage().contains("not in LIMIT or OFFSET"), limit.getCause().getMessage());
    }
    SQLException bad = assertThrows(SQLException.class,
        () -> DriverManager.getConnection("jdbc:gpudf:path=" + dir + ";backend=tpu"));
    assertTrue(bad.getMessage().contains("backend must be cpu, gpu or auto"), bad.getMessage());
    assertThrows(SQLException.class, () -> DriverManager.getConnection("jdbc:gpudf:path=" + dir.resolve("missing")));
  }
}
