package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.GpuSession;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Base64;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server with TLS (a self-signed certificate made by the JDK's keytool): TLS clients get answers, plain ones do not. */
class TlsTest {
  @Test
  void servesTlsClientsOnly(@TempDir Path dir) throws Exception {
    Path store = dir.resolve("server.p12");
    Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "gpudf", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2", "-dname", "CN=localhost",
        "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(),
        "-storepass", "changeit", "-keypass", "changeit").redirectErrorStream(true).start();
    String log = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, keytool.waitFor(), log);
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(store.toFile())) {
      ks.load(in, "changeit".toCharArray());
    }
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate("gpudf").getEncoded()));
    Files.writeString(key, pem("PRIVATE KEY", ks.getKey("gpudf", "changeit".toCharArray()).getEncoded()));
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      session.update("CREATE TABLE t (x INTEGER)");
      session.update("INSERT INTO t VALUES (1), (2), (3)");
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0).withTls(cert, key))) {
        assertTrue(server.tls());
        String base = "jdbc:arrow-flight-sql://localhost:" + server.port() + "/?useEncryption=";
        try (Connection c = DriverManager.getConnection(base + "true&disableCertificateVerification=true");
            Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT SUM(x) FROM t")) {
          assertTrue(rs.next());
          assertEquals(6, rs.getLong(1));
        }
        assertThrows(SQLException.class, () -> DriverManager.getConnection(base + "false").createStatement()
            .executeQuery("SELECT 1"));
        // the command line verifies the certificate unless told not to, and says how
        String port = String.valueOf(server.port());
        Cli unverified = cli("health", "--tls", "--port", port);
        assertEquals(1, unverified.status, unverified.err);
        assertTrue(unverified.err.contains("pass --tls-ca FILE"), unverified.err);
        Cli trusted = cli("health", "--tls", "--port", port, "--tls-ca", cert.toString());
        assertEquals(0, trusted.status, trusted.err);
        assertEquals(0, cli("health", "--tls", "--port", port, "--tls-no-verify").status);
        Cli sum = cli("sql", "--server", "grpc+tls://localhost:" + port, "--tls-ca", cert.toString(), "SELECT SUM(x) AS s FROM t");
        assertEquals(0, sum.status, sum.err);
        assertTrue(sum.out.contains("6"), sum.out);
        Cli refused = cli("sql", "--server", "grpc+tls://localhost:" + port, "SELECT 1");
        assertEquals(1, refused.status);
        assertTrue(refused.err.contains("--tls-ca"), refused.err);
      }
    }
  }

  private record Cli(int status, String out, String err) {}

  private static Cli cli(String... args) {
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    picocli.CommandLine line = dev.gpudf.cli.GpudfCli.commandLine();
    line.setOut(new java.io.PrintWriter(out, true));
    line.setErr(new java.io.PrintWriter(err, true));
    int status = line.execute(args);
    return new Cli(status, out.toString(), err.toString());
  }

  private static String pem(String kind, byte[] der) {
    return "-----BEGIN " + kind + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
        .encodeToString(der) + "\n-----END " + kind + "-----\n";
  }
}
