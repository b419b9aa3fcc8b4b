package dev.gpudf.flight;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.sql.GpuSession;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Closing a server while a call is still running on it: the call's handler must end, and free
 * what it holds, before the server's allocator is closed. gRPC reports the server terminated once
 * its connections are gone, while a handler may still be running on the call executor.
 */
class ServerCloseTest {
  @Test
  void closingTheServerUnderAPausedReaderFreesEverything() throws Exception {
    int rows = 40 * ResultSender.BATCH_ROWS;
    try (BufferAllocator root = new RootAllocator(); GpuSession session = GpuSession.cpu(root);
        BufferAllocator clientMemory = new RootAllocator()) {
      GpudfFlightServer server = GpudfFlightServer.start(session, root, GpudfFlightServer.Options.plain("localhost", 0));
      boolean closed = false;
      try (FlightClient fc = FlightClient.builder(clientMemory, Location.forGrpcInsecure("localhost", server.port()))
              .build();
          FlightSqlClient client = new FlightSqlClient(fc);
          VectorSchemaRoot many = FlightSqlServerTest.people(clientMemory, rows)) {
        TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
            .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE).build();
        client.executeIngest(many, new FlightSqlClient.ExecuteIngestOptions("crowd", create, null, null, Map.of()));
        FlightInfo info = client.execute("SELECT name, age FROM crowd");
        FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket());
        assertTrue(stream.next());
        assertEquals(ResultSender.BATCH_ROWS, stream.getRoot().getRowCount());
        // the reader pauses: the sender holds a batch and waits for the client; the server closes now
        Thread.sleep(500);
        assertTrue(server.allocatedBytes() > 0, "the sender holds a batch while the reader pauses");
        closed = true;
        // the server's allocator fails its close on any buffer still held
        assertDoesNotThrow(server::close, "closing the server under a paused reader");
        // the client reads what reached it, then learns that its stream was cut
        FlightRuntimeException cut = assertThrows(FlightRuntimeException.class, () -> {
          while (stream.next()) {
            assertTrue(stream.getRoot().getRowCount() > 0);
          }
        });
        assertEquals(FlightStatusCode.CANCELLED, cut.status().code(), cut.getMessage());
        stream.close();
      } finally {
        if (!closed) {
          server.close();
        }
      }
    }
  }
}
