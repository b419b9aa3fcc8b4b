package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} at random points while a client inserts: a server process ({@code gpudf serve
 * --path DIR}) is killed during a stream of INSERTs (each a few rows under one statement id; the
 * table's file rewritten whole whenever its append log outgrows it), restarted on the same
 * directory, and every table checked against what the client was told: each acknowledged
 * statement's rows are there exactly once, the one in flight when the server died is there whole
 * or not at all, and nothing else is. Several rounds on one directory, so later rounds start
 * from what a crash left.
 */
class DurabilityTest {
  private static final Pattern PORT = Pattern.compile("grpc://[^:]+:(\\d+)");

  @Test
  void everyAnsweredInsertSurvivesKillNine(@TempDir Path dir) throws Exception {
    Random random = new Random();
    long seed = random.nextLong();
    random.setSeed(seed);
    System.out.println("DurabilityTest seed " + seed);
    Map<Long, Integer> acknowledged = new HashMap<>();
    Map<Long, Integer> inFlight = new HashMap<>();
    long nextId = 0;
    int rounds = 6;
    for (int round = 0; round < rounds; round++) {
      Process server = start(dir);
      try (Connection c = connect(server)) {
        check(c, acknowledged, inFlight, round);
        if (round == 0) {
          try (Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE t (id BIGINT, k INTEGER, pad VARCHAR)");
          }
        }
        inFlight.clear();
        // insert until the kill, which comes after a random delay on another thread
        long killAfter = 300 + random.nextInt(1200);
        Thread killer = new Thread(() -> {
          try {
            Thread.sleep(killAfter);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          server.destroyForcibly();
        });
        killer.start();
        try (Statement s = c.createStatement()) {
          while (true) {
            long id = nextId++;
            int rows = 1 + random.nextInt(5);
            StringBuilder sql = new StringBuilder("INSERT INTO t VALUES ");
            for (int r = 0; r < rows; r++) {
              sql.append(r == 0 ? "" : ", ").append('(').append(id).append(", ").append(r).append(", '")
                  .append("x".repeat(random.nextInt(40))).append("')");
            }
            inFlight.put(id, rows);
            try {
              s.executeUpdate(sql.toString());
            } catch (SQLException e) {
              break; // the server is gone: this statement was not answered
            }
            inFlight.remove(id);
            acknowledged.put(id, rows);
          }
        }
        killer.join();
      } catch (SQLException e) {
        // the connection itself failed with the kill: what was answered is recorded
      } finally {
        server.destroyForcibly();
        server.waitFor(30, TimeUnit.SECONDS);
      }
    }
    Process last = start(dir);
    try (Connection c = connect(last)) {
      check(c, acknowledged, inFlight, rounds);
    } finally {
      last.destroyForcibly();
      last.waitFor(30, TimeUnit.SECONDS);
    }
    assertTrue(acknowledged.size() > rounds, "too few inserts were answered to test anything: " + acknowledged.size());
    System.out.println("DurabilityTest: " + rounds + " kills, " + acknowledged.size() + " answered inserts all found");
  }

  /** Every answered statement's rows once, the unanswered one whole or not at all, nothing else. */
  private static void check(Connection c, Map<Long, Integer> acknowledged, Map<Long, Integer> inFlight, int round)
      throws SQLException {
    if (acknowledged.isEmpty() && inFlight.isEmpty()) {
      return;
    }
    Map<Long, Integer> found = new HashMap<>();
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, COUNT(*), COUNT(DISTINCT k) FROM t GROUP BY id")) {
      while (rs.next()) {
        assertEquals(rs.getLong(2), rs.getLong(3), "statement " + rs.getLong(1) + " has a row twice, after kill " + round);
        found.put(rs.getLong(1), (int) rs.getLong(2));
      }
    }
    for (Map.Entry<Long, Integer> a : acknowledged.entrySet()) {
      assertEquals(a.getValue(), found.remove(a.getKey()), "answered statement " + a.getKey() + " after kill " + round);
    }
    for (Map.Entry<Long, Integer> f : inFlight.entrySet()) {
      Integer there = found.remove(f.getKey());
      assertTrue(there == null || there.equals(f.getValue()),
          "the statement in flight at kill " + round + " is there in part: " + there + " of " + f.getValue() + " rows");
      if (there != null) {
        // it was written before the kill: from now on it must stay
        // (recorded by the caller's next check through acknowledged)
        acknowledged.put(f.getKey(), there);
      }
    }
    assertEquals(Map.of(), found, "rows of statements never sent, after kill " + round);
  }

  private static Process start(Path dir) throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), "dev.gpudf.cli.GpudfCli",
        "serve", "--path", dir.toString(), "--port", "0", "--backend", "cpu").redirectErrorStream(true).start();
    return p;
  }

  /** A connection to the started server, once it prints its port. */
  private static Connection connect(Process server) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    String port = null;
    for (String line = out.readLine(); line != null; line = out.readLine()) {
      seen.append(line).append('\n');
      Matcher m = PORT.matcher(line);
      if (m.find()) {
        port = m.group(1);
        break;
      }
    }
    assertNotNull(port, "the server did not start:\n" + seen);
    // keep reading its output so it never blocks on a full pipe
    Thread drain = new Thread(() -> out.lines().forEach(l -> { }));
    drain.setDaemon(true);
    drain.start();
    return DriverManager.getConnection("jdbc:arrow-flight-sql://localhost:" + port + "/?useEncryption=false");
  }
}
