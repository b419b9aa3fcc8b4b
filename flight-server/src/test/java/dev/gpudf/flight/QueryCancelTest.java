package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.MemoryLimits;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A query running on the server stops when its client cancels it, through Flight's
 * CancelFlightInfo and through JDBC's {@code Statement.cancel}, and one past its time or memory
 * limit stops with RESOURCE_EXHAUSTED; the server holds no more memory afterwards and answers the
 * next query. The slow query is 40 cross joins of 2,000 rows (about 15 s on a 2-core host when
 * left alone), each an operator after which the query checks whether to stop.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryCancelTest {
  private static final int ROWS = 2_000;
  private static final String SLOW = slow(40);
  /** How soon after a cancel the query must be gone: a few of its operators, far below its whole time. */
  private static final long STOP_MS = 5_000;
  private BufferAllocator allocator;
  private GpuSession session;
  private GpudfFlightServer server;
  private FlightSqlClient client;
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @BeforeAll
  void start() throws Exception {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < ROWS; i++) {
      values.append(i == 0 ? "" : ",").append('(').append(i).append(')');
    }
    session.update("CREATE TABLE t AS SELECT * FROM (VALUES " + values + ") AS v(x)");
    server = GpudfFlightServer.start(session, allocator, GpudfFlightServer.Options.plain("localhost", 0));
    client = new FlightSqlClient(FlightClient.builder(allocator, Location.forGrpcInsecure("localhost", server.port())).build());
  }

  @AfterAll
  void stop() throws Exception {
    pool.shutdownNow();
    client.close();
    server.close();
    session.close();
    allocator.close();
  }

  private static String slow(int branches) {
    StringBuilder q = new StringBuilder("SELECT COUNT(*) FROM (");
    for (int i = 0; i < branches; i++) {
      q.append(i == 0 ? "" : " UNION ALL ").append("SELECT a.x FROM t a, t b WHERE MOD(a.x * b.x + ").append(i).append(", 97) = 1");
    }
    return q.append(") AS u").toString();
  }

  private long drain(FlightInfo info) throws Exception {
    long rows = 0;
    try (FlightStream s = client.getStream(info.getEndpoints().get(0).getTicket())) {
      while (s.next()) {
        rows += s.getRoot().getRowCount();
      }
    }
    return rows;
  }

  /** The failure of {@code run}, which must end within {@link #STOP_MS} of {@code sinceNanos}. */
  private static Throwable failureSoon(Future<?> run, long sinceNanos) throws Exception {
    ExecutionException e = assertThrows(ExecutionException.class, () -> run.get(60, TimeUnit.SECONDS));
    long ms = (System.nanoTime() - sinceNanos) / 1_000_000;
    assertTrue(ms < STOP_MS, "the query stopped " + ms + " ms after its cancel");
    return e.getCause();
  }

  /**
   * The server's memory is back to {@code memoryBefore} or below within {@link #STOP_MS} (a query that was
   * not stopped holds its joins' rows for seconds more), and it answers a query.
   */
  private void answersAfterwards(long memoryBefore) throws Exception {
    long deadline = System.nanoTime() + STOP_MS * 1_000_000;
    // at most: what an earlier call left to be freed may go meanwhile
    while (allocator.getAllocatedMemory() > memoryBefore && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    long after = allocator.getAllocatedMemory();
    assertTrue(after <= memoryBefore, "server memory after the stopped query: " + after + " bytes, before it " + memoryBefore);
    assertEquals(1, drain(client.execute("SELECT COUNT(*) FROM t WHERE x < 10")));
  }

  @Test
  void cancelFlightInfoStopsARunningQuery() throws Exception {
    long before = allocator.getAllocatedMemory();
    FlightInfo info = client.execute(SLOW);
    Future<Long> run = pool.submit(() -> drain(info));
    Thread.sleep(1_500);
    long cancelled = System.nanoTime();
    assertEquals(CancelStatus.CANCELLED, client.cancelFlightInfo(new CancelFlightInfoRequest(info)).getStatus());
    FlightRuntimeException e = assertInstanceOf(FlightRuntimeException.class, failureSoon(run, cancelled));
    assertEquals(FlightStatusCode.CANCELLED, e.status().code(), e.getMessage());
    assertTrue(e.getMessage().contains("the query was cancelled"), e.getMessage());
    // a second cancel finds nothing running
    assertEquals(CancelStatus.NOT_CANCELLABLE, client.cancelFlightInfo(new CancelFlightInfoRequest(info)).getStatus());
    answersAfterwards(before);
  }

  /**
   * Arrow's Flight SQL JDBC driver sends no cancel to the server: its {@code Statement.cancel}
   * drops the call that waits for the rows (and leaves that statement cancelled for good), and the
   * server stops the query whose call its client cancelled.
   */
  @Test
  void jdbcStatementCancelStopsARunningQuery() throws Exception {
    long before = allocator.getAllocatedMemory();
    String url = "jdbc:arrow-flight-sql://localhost:" + server.port() + "/?useEncryption=false";
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      Future<Boolean> run = pool.submit(() -> {
        try (ResultSet rs = s.executeQuery(SLOW)) {
          return rs.next();
        }
      });
      Thread.sleep(1_500);
      long cancelled = System.nanoTime();
      s.cancel();
      Throwable e = failureSoon(run, cancelled);
      assertInstanceOf(SQLException.class, e);
    }
    answersAfterwards(before);
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
        assertTrue(rs.next());
        assertEquals(ROWS, rs.getLong(1));
      }
    }
  }

  @Test
  void aQueryPastItsMemoryLimitIsResourceExhausted() throws Exception {
    long before = allocator.getAllocatedMemory();
    session.limitQueryMemory(new MemoryLimits(0, 64 << 10));
    try {
      FlightInfo info = client.execute("SELECT a.x, b.x FROM t a, t b WHERE a.x < 50 ORDER BY a.x, b.x");
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> drain(info));
      assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.getMessage());
      assertTrue(e.getMessage().contains(MemoryLimits.HOST_SETTING), e.getMessage());
    } finally {
      session.limitQueryMemory(MemoryLimits.NONE);
    }
    answersAfterwards(before);
  }
}
