package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

/**
 * Every mistake a client can make reaches it as INVALID_ARGUMENT (or UNIMPLEMENTED) with a message
 * that names the problem, never as INTERNAL, which is kept for gpudf's own bugs (issue 24, item 7).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorStatusTest {
  private BufferAllocator allocator;
  private GpuSession session;
  private GpudfFlightServer server;
  private FlightClient flight;
  private FlightSqlClient client;

  @BeforeAll
  void start() throws Exception {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    session.update("CREATE TABLE t (x INTEGER)");
    server = GpudfFlightServer.start(session, allocator, GpudfFlightServer.Options.plain("localhost", 0));
    flight = FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", server.port())).build();
    client = new FlightSqlClient(flight);
  }

  @AfterAll
  void stop() throws Exception {
    client.close();
    server.close();
    session.close();
    allocator.close();
  }

  private static FlightRuntimeException fails(FlightStatusCode code, String fragment, Executable call) {
    FlightRuntimeException e = assertThrows(FlightRuntimeException.class, call);
    assertEquals(code, e.status().code(), e.getMessage());
    assertTrue(e.getMessage().contains(fragment), "'" + fragment + "' not in: " + e.getMessage());
    return e;
  }

  private void query(String sql) throws Exception {
    try (FlightStream s = client.getStream(client.execute(sql).getEndpoints().get(0).getTicket())) {
      while (s.next()) {
        // drain
      }
    }
  }

  @Test
  void ddlSentAsAQueryIsInvalidArgument() {
    fails(FlightStatusCode.INVALID_ARGUMENT, "not a query", () -> query("CREATE TABLE u (x INTEGER)"));
    fails(FlightStatusCode.INVALID_ARGUMENT, "not a query", () -> query("INSERT INTO t VALUES (1)"));
  }

  @Test
  void aGarbageTicketIsInvalidArgument() {
    fails(FlightStatusCode.INVALID_ARGUMENT, "ticket", () -> {
      try (FlightStream s = flight.getStream(new Ticket("not a ticket".getBytes(StandardCharsets.UTF_8)))) {
        s.next();
      }
    });
  }

  @Test
  void misspelledAndEmptyStatementsSayWhatIsWrong() {
    fails(FlightStatusCode.INVALID_ARGUMENT, "SELEC", () -> query("SELEC 1"));
    fails(FlightStatusCode.INVALID_ARGUMENT, "SELEC", () -> client.executeUpdate("SELEC 1"));
    fails(FlightStatusCode.INVALID_ARGUMENT, "empty", () -> query(""));
    fails(FlightStatusCode.INVALID_ARGUMENT, "empty", () -> query("  ;  "));
    fails(FlightStatusCode.INVALID_ARGUMENT, "empty", () -> client.executeUpdate(""));
  }

  @Test
  void unknownNamesAreInvalidArgument() {
    fails(FlightStatusCode.INVALID_ARGUMENT, "nothere", () -> query("SELECT * FROM nothere"));
    fails(FlightStatusCode.INVALID_ARGUMENT, "nothere", () -> query("SELECT nothere(1)"));
    fails(FlightStatusCode.INVALID_ARGUMENT, "nothere", () -> client.executeUpdate("DROP TABLE nothere"));
  }
}
