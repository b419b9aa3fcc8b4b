package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Logins and what a login may do (issue 24, item 5): an unknown name costs what a known one does,
 * failed logins are limited per name, a read-only user cannot change tables, and a statement
 * handle works only for the user who made it.
 */
class AuthTest {
  @TempDir
  Path dir;

  private Path users() throws Exception {
    Path users = dir.resolve("users");
    Files.writeString(users, Users.line("alice", "a-secret".toCharArray()) + "\n"
        + Users.line("reader", "r-secret".toCharArray(), Users.Role.READ) + "\n", StandardCharsets.UTF_8);
    return users;
  }

  private static long median(Runnable r) {
    long[] t = new long[5];
    for (int i = 0; i < t.length; i++) {
      long t0 = System.nanoTime();
      r.run();
      t[i] = System.nanoTime() - t0;
    }
    Arrays.sort(t);
    return t[2];
  }

  @Test
  void unknownNamesCostWhatKnownOnesDoAndFailuresAreLimited() throws Exception {
    Users u = Users.read(users());
    long known = median(() -> assertThrows(FlightRuntimeException.class, () -> u.validate("alice", "wrong")));
    long unknown = median(() -> assertThrows(FlightRuntimeException.class, () -> u.validate("mallory", "wrong")));
    double ratio = (double) unknown / known;
    assertTrue(ratio > 0.5 && ratio < 2, "unknown " + unknown / 1e6 + " ms, known " + known / 1e6 + " ms");
    // alice has now failed 5 times within the minute: even her right password is refused, and says why
    FlightRuntimeException limited = assertThrows(FlightRuntimeException.class, () -> u.validate("alice", "a-secret"));
    assertEquals(FlightStatusCode.UNAUTHENTICATED, limited.status().code());
    assertTrue(limited.getMessage().contains("too many failed logins"), limited.getMessage());
    // another name is not held back by alice's failures
    assertEquals("reader", u.validate("reader", "r-secret").getPeerIdentity());
  }

  @Test
  void readOnlyUsersCannotChangeTablesAndHandlesBelongToTheirMaker() throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      session.update("CREATE TABLE t (x INTEGER)");
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0).withUsers(users()))) {
        String url = "jdbc:arrow-flight-sql://localhost:" + server.port() + "/?useEncryption=false&user=";
        try (Connection c = DriverManager.getConnection(url + "reader&password=r-secret"); Statement s = c.createStatement()) {
          try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
            assertTrue(rs.next());
          }
          SQLException e = assertThrows(SQLException.class, () -> s.executeUpdate("INSERT INTO t VALUES (1)"));
          assertTrue(e.getMessage().contains("user 'reader' may read tables only"), e.getMessage());
        }
        try (Connection c = DriverManager.getConnection(url + "alice&password=a-secret"); Statement s = c.createStatement()) {
          assertEquals(1, s.executeUpdate("INSERT INTO t VALUES (1)"));
        }
        try (FlightClient fc = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", server.port())).build();
            FlightSqlClient client = new FlightSqlClient(fc)) {
          CallOption alice = fc.authenticateBasicToken("alice", "a-secret").orElseThrow();
          CallOption reader = fc.authenticateBasicToken("reader", "r-secret").orElseThrow();
          FlightInfo hers = client.execute("SELECT x FROM t", alice);
          FlightRuntimeException notYours = assertThrows(FlightRuntimeException.class, () -> {
            try (FlightStream stream = client.getStream(hers.getEndpoints().get(0).getTicket(), reader)) {
              stream.next();
            }
          });
          assertEquals(FlightStatusCode.NOT_FOUND, notYours.status().code());
          try (FlightStream stream = client.getStream(hers.getEndpoints().get(0).getTicket(), alice)) {
            assertTrue(stream.next());
            assertEquals(1, stream.getRoot().getRowCount());
          }
        }
      }
    }
  }

  @Test
  void handlesExpireAndAreCountedPerUser() {
    Handles<String> h = new Handles<>("statement", 60_000_000_000L, 2);
    ByteString a = h.add("alice", "one");
    h.add("alice", "two");
    FlightRuntimeException full = assertThrows(FlightRuntimeException.class, () -> h.add("alice", "three"));
    assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, full.status().code());
    assertTrue(full.getMessage().contains("close some first"), full.getMessage());
    h.add("bob", "his own");
    assertNull(h.get("bob", a), "another user's handle is not found");
    assertNull(h.remove("bob", a));
    assertEquals("one", h.get("alice", a));
    Handles<String> idle = new Handles<>("statement", 0, 10);
    ByteString old = idle.add("alice", "old");
    idle.add("alice", "new");
    assertNull(idle.get("alice", old), "an idle handle is dropped when the next is made");
  }
}
