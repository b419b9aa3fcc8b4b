package dev.gpudf.cli;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.ResultText;
import java.net.URI;
import java.nio.file.Path;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * Where {@code gpudf sql} runs statements: an in-process session over a directory, or a gpudf
 * Flight SQL server. Either way a statement's outcome comes back as text: an aligned table and
 * its row count, or the rows an update changed.
 */
interface SqlTarget extends AutoCloseable {
  /** Runs {@code sql} and returns what to print (without the timing line). */
  String run(String sql);

  /** The physical plan (in-process only). */
  String explain(String sql);

  /** A label for the timing line: "cpu backend", "gpu backend", or the server. */
  String label();

  /**
   * Where the last statement's time went, as "plan X, execute Y, transfer Z ms" (in-process
   * queries), or null where that is not known (an update, a server).
   */
  default String lastSplit() {
    return null;
  }

  /** Where the start-up's time went (in-process: device, session, tables), or null. */
  default String startup() {
    return null;
  }

  @Override
  void close() throws Exception;

  /** An in-process session over the tables of {@code path}. */
  static SqlTarget local(Path path, String backend) {
    boolean gpu = GpuSession.usesGpu(backend);
    RootAllocator allocator = new RootAllocator();
    Gpu device = null;
    GpuSession session = null;
    // start-up phases in ns: device (CUDA context and kernels), session, tables (the directory opened)
    long[] phases = new long[3];
    try {
      long t0 = System.nanoTime();
      if (gpu) {
        // the warm-ups (the planner's, Arrow's schema) run while the CUDA context is made
        GpuSession.warmUp();
      }
      device = gpu ? Gpu.open(0) : null;
      long t1 = System.nanoTime();
      session = gpu ? GpuSession.gpu(device, allocator) : GpuSession.cpu(allocator);
      long t2 = System.nanoTime();
      if (path != null) {
        FileTables.loadDirectory(session.catalog(), path, allocator);
      }
      phases[0] = t1 - t0;
      phases[1] = t2 - t1;
      phases[2] = System.nanoTime() - t2;
    } catch (RuntimeException e) {
      if (session != null) {
        session.close();
      }
      if (device != null) {
        device.close();
      }
      allocator.close();
      throw e;
    }
    GpuSession s = session;
    Gpu d = device;
    return new SqlTarget() {
      private GpuSession.QueryTimings last;

      @Override
      public String run(String sql) {
        last = null;
        if (!s.returnsRows(sql)) {
          return "(" + s.update(sql) + " rows changed)\n";
        }
        try (VectorSchemaRoot result = s.query(sql, java.util.List.of(), t -> last = t)) {
          return ResultText.format(result) + "(" + result.getRowCount() + " rows)\n";
        }
      }

      @Override
      public String lastSplit() {
        return last == null ? null : String.format(java.util.Locale.ROOT, "plan %.1f%s, execute %.1f, transfer %.1f ms",
            last.planNanos() / 1e6, last.planPhases() == null ? "" : " (" + last.planPhases().text() + ")",
            last.executeNanos() / 1e6, last.transferNanos() / 1e6);
      }

      @Override
      public String startup() {
        return String.format(java.util.Locale.ROOT, "device %s, session %.1f, tables %.1f ms",
            gpu ? String.format(java.util.Locale.ROOT, "%.1f", phases[0] / 1e6) : "-", phases[1] / 1e6, phases[2] / 1e6);
      }

      @Override
      public String explain(String sql) {
        return s.explain(sql);
      }

      @Override
      public String label() {
        return (gpu ? "gpu" : "cpu") + " backend";
      }

      @Override
      public void close() {
        s.close();
        if (d != null) {
          d.close();
        }
        allocator.close();
      }
    };
  }

  /** A gpudf Flight SQL server at {@code uri} ({@code grpc://host:port} or {@code grpc+tls://host:port}). */
  static SqlTarget remote(String uri, String user, String password, ClientTls trust) {
    URI u = URI.create(uri);
    boolean tls = u.getScheme().equals("grpc+tls");
    if (!tls && !u.getScheme().equals("grpc") && !u.getScheme().equals("grpc+tcp")) {
      throw new UserException("a server is grpc://host:port or grpc+tls://host:port, not " + uri);
    }
    BufferAllocator allocator = new RootAllocator();
    FlightClient client;
    try {
      client = trust.connect(allocator, u.getHost(), u.getPort(), tls);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    CallOption[] auth;
    try {
      auth = user == null ? new CallOption[0] : new CallOption[] {client.authenticateBasicToken(user, password).orElseThrow()};
    } catch (FlightRuntimeException e) {
      try {
        client.close();
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
      }
      allocator.close();
      throw new UserException("cannot log in to " + uri + ": " + trust.explain(e, tls), e);
    }
    FlightSqlClient sql = new FlightSqlClient(client);
    return new SqlTarget() {
      @Override
      public String run(String statement) {
        // closed with the credentials too: a server with users refuses a close without them
        FlightSqlClient.PreparedStatement ps;
        try {
          ps = sql.prepare(statement, auth);
        } catch (FlightRuntimeException e) {
          throw new UserException(e.status().code() + ": " + trust.explain(e, tls), e);
        }
        try {
          if (ps.getResultSetSchema().getFields().isEmpty()) {
            return "(" + ps.executeUpdate(auth) + " rows changed)\n";
          }
          FlightInfo info = ps.execute(auth);
          try (VectorSchemaRoot all = VectorSchemaRoot.create(info.getSchemaOptional().orElse(ps.getResultSetSchema()),
              allocator)) {
            all.allocateNew();
            for (FlightEndpoint e : info.getEndpoints()) {
              try (FlightStream stream = sql.getStream(e.getTicket(), auth)) {
                while (stream.next()) {
                  VectorSchemaRootAppender.append(all, stream.getRoot());
                }
              }
            }
            return ResultText.format(all) + "(" + all.getRowCount() + " rows)\n";
          }
        } catch (FlightRuntimeException e) {
          throw new UserException(e.status().code() + ": " + trust.explain(e, tls), e);
        } catch (Exception e) {
          throw new UserException("reading the result from " + uri + " failed: " + e, e);
        } finally {
          ps.close(auth);
        }
      }

      @Override
      public String explain(String statement) {
        throw new UserException("--explain works in-process only (without --server)");
      }

      @Override
      public String label() {
        return uri;
      }

      @Override
      public void close() throws Exception {
        // the Flight SQL client closes the Flight client under it
        try (allocator) {
          sql.close();
        }
      }
    };
  }
}
