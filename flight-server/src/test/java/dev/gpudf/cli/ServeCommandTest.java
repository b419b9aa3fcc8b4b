package dev.gpudf.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.flight.Users;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code gpudf user} writes a line {@code gpudf serve --users} accepts; {@code serve} without data serves TPC-H. */
class ServeCommandTest {
  @Test
  void servesGeneratedTpchWithAUserFromTheUserCommand(@TempDir Path dir) throws Exception {
    StringWriter userOut = new StringWriter();
    CommandLine userCli = GpudfCli.commandLine();
    userCli.setOut(new PrintWriter(userOut));
    InputStream stdin = System.in;
    try {
      System.setIn(new ByteArrayInputStream("pa55word\n".getBytes(StandardCharsets.UTF_8)));
      assertEquals(0, userCli.execute("user", "bo"));
    } finally {
      System.setIn(stdin);
    }
    assertTrue(userOut.toString().startsWith("bo:"), userOut.toString());
    Path users = dir.resolve("users");
    Files.writeString(users, userOut.toString());
    assertEquals("bo", Users.read(users).validate("bo", "pa55word").getPeerIdentity());

    CommandLine cli = GpudfCli.commandLine();
    StringWriter out = new StringWriter();
    cli.setOut(new PrintWriter(out));
    ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
    AtomicInteger status = new AtomicInteger(-1);
    Thread t = new Thread(() -> status.set(cli.execute("serve", "--backend", "cpu", "--port", "0", "--tpch-scale", "0.001",
        "--users", users.toString())));
    t.start();
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (serve.running == null && t.isAlive() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    try {
      assertTrue(serve.running != null, "the server did not start: " + out);
      String url = "jdbc:arrow-flight-sql://localhost:" + serve.running.port() + "/?useEncryption=false&user=bo&password=";
      assertTrue(out.toString().contains("jdbc:arrow-flight-sql://localhost:" + serve.running.port()), out.toString());
      try (Connection c = DriverManager.getConnection(url + "pa55word"); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*), SUM(l_quantity) FROM lineitem WHERE l_shipdate < DATE '1995-01-01'")) {
        assertTrue(rs.next());
        assertTrue(rs.getLong(1) > 0);
      }
      assertThrows(SQLException.class, () -> DriverManager.getConnection(url + "nope").createStatement().executeQuery("SELECT 1"));
      // the command line logs in, runs each statement once and closes it with the same credentials
      String server = "grpc://localhost:" + serve.running.port();
      for (String statement : List.of("CREATE TABLE once (x INTEGER)", "INSERT INTO once VALUES (1)")) {
        StringWriter sqlErr = new StringWriter();
        CommandLine sql = GpudfCli.commandLine();
        sql.setOut(new PrintWriter(new StringWriter(), true));
        sql.setErr(new PrintWriter(sqlErr, true));
        assertEquals(0, sql.execute("sql", "--server", server, "--user", "bo", "--password", "pa55word", statement),
            sqlErr.toString());
      }
      try (Connection c = DriverManager.getConnection(url + "pa55word"); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM once")) {
        assertTrue(rs.next());
        assertEquals(1, rs.getLong(1), "the INSERT ran once");
      }
    } finally {
      if (serve.running != null) {
        serve.running.stop();
      }
      t.join(30_000);
    }
    assertEquals(0, status.get(), out.toString());
  }

  @Test
  void helpAndStartFailuresAreOneLineEach(@TempDir Path dir) throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = GpudfCli.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    assertEquals(0, cli.execute("serve", "--help"));
    assertTrue(out.toString().startsWith("Usage: gpudf serve"), out.toString());
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("localhost"))) {
      assertEquals(1, cli.execute("serve", "--backend", "cpu", "--port", String.valueOf(taken.getLocalPort()),
          "--tpch-scale", "0.001"));
    }
    assertTrue(err.toString().startsWith("error: cannot listen on localhost:"), err.toString());
    assertEquals(1, err.toString().lines().count(), "one line, no stack trace: " + err);
    StringWriter openErr = new StringWriter();
    cli.setErr(new PrintWriter(openErr, true));
    assertEquals(1, cli.execute("serve", "--backend", "cpu", "--host", "0.0.0.0", "--port", "0", "--tpch-scale", "0.001"));
    assertTrue(openErr.toString().startsWith("error: serving on 0.0.0.0 without --users lets anyone"), openErr.toString());
    Path key = Files.writeString(dir.resolve("key.pem"), "not a key");
    StringWriter tlsErr = new StringWriter();
    cli.setErr(new PrintWriter(tlsErr, true));
    assertEquals(1, cli.execute("serve", "--backend", "cpu", "--port", "0", "--tpch-scale", "0.001", "--tls-cert",
        dir.resolve("missing.pem").toString(), "--tls-key", key.toString()));
    assertTrue(tlsErr.toString().startsWith("error: cannot read the TLS certificate or key"), tlsErr.toString());
  }
}
