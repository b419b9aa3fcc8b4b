package dev.gpudf.cli;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.flight.GpudfFlightServer;
import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchTables;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code gpudf serve}: the Flight SQL server over a directory of tables, or over a generated
 * TPC-H dataset when no directory is given, until the process is stopped.
 */
@Command(name = "serve", description = "Serve tables over Arrow Flight SQL (JDBC, ADBC, pyarrow clients)")
final class ServeCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--path", description = "Directory whose *.arrow, *.parquet and *.csv files are the tables; "
      + "tables created or changed through the server are written back there as *.arrow (default: generate TPC-H at "
      + "--tpch-scale, nothing written)")
  Path path;

  @Option(names = "--tpch-scale", defaultValue = "0.01", description = "TPC-H scale factor generated when no --path is given "
      + "(default ${DEFAULT-VALUE})")
  double tpchScale;

  @Option(names = "--host", defaultValue = "localhost", description = "Address to listen on (default ${DEFAULT-VALUE}; "
      + "0.0.0.0 for every interface)")
  String host;

  @Option(names = "--port", defaultValue = "31337", description = "Port (default ${DEFAULT-VALUE}; 0 picks a free one)")
  int port;

  @Option(names = "--backend", defaultValue = "auto", description = "cpu, gpu, or auto (the GPU when one is usable; default)")
  String backend;

  @Option(names = "--users", description = "Users file (lines from `gpudf user`); without it the server asks no password")
  Path users;

  @Option(names = "--tls-cert", description = "PEM certificate chain: serve TLS (with --tls-key)")
  Path tlsCert;

  @Option(names = "--tls-key", description = "PEM private key (PKCS#8) for --tls-cert")
  Path tlsKey;

  @Option(names = "--insecure", description = "Serve on an address other than loopback without --users: anyone who "
      + "can reach the port may then read and change every table")
  boolean insecure;

  @Option(names = "--max-message-mb", defaultValue = "256", description = "Largest inbound message in MiB (default ${DEFAULT-VALUE})")
  int maxMessageMb;

  /** Whether {@code host} is this machine's own loopback address, which no other machine can reach. */
  private static boolean loopback(String host) {
    try {
      return java.net.InetAddress.getByName(host).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      throw new UserException("unknown host '" + host + "' for --host", e);
    }
  }

  /** The running server, once started (tests stop it through this). */
  volatile GpudfFlightServer running;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (users == null && !insecure && !loopback(host)) {
      throw new UserException("serving on " + host + " without --users lets anyone who can reach the port read and change"
          + " every table: give --users FILE (lines from `gpudf user`), or --insecure to serve so anyway");
    }
    boolean gpu = GpuSession.usesGpu(backend);
    if (gpu) {
      // the warm-ups (the planner's, Arrow's schema) run while the CUDA context is made
      GpuSession.warmUp();
    }
    try (RootAllocator allocator = new RootAllocator(); Gpu device = gpu ? Gpu.open(0) : null;
        GpuSession session = gpu ? GpuSession.gpu(device, allocator) : GpuSession.cpu(allocator)) {
      List<String> tables = path != null ? FileTables.loadDirectory(session.catalog(), path, allocator)
          : TpchTables.loadAll(session.catalog(), tpchScale, allocator);
      GpudfFlightServer.Options options = GpudfFlightServer.Options.plain(host, port).withUsers(users)
          .withMaxInboundBytes(Math.multiplyExact(maxMessageMb, 1 << 20)).withDataDirectory(path);
      if (tlsCert != null || tlsKey != null) {
        options = options.withTls(tlsCert, tlsKey);
      }
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator, options)) {
        out.printf("gpudf Flight SQL server on %s://%s:%d (%s backend), %d tables: %s%n", server.tls() ? "grpc+tls" : "grpc",
            host, server.port(), gpu ? "gpu" : "cpu", tables.size(), String.join(", ", tables));
        out.printf("JDBC: jdbc:arrow-flight-sql://%s:%d/?useEncryption=%s%s%n", host, server.port(), server.tls(),
            users == null ? "" : "&user=NAME&password=PASSWORD");
        if (users == null) {
          out.println("warning: no --users file: anyone who can reach the port can read and change the tables");
        }
        out.flush();
        running = server;
        Thread stop = new Thread(server::stop, "gpudf-serve-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        server.awaitTermination();
        try {
          Runtime.getRuntime().removeShutdownHook(stop);
        } catch (IllegalStateException shuttingDown) {
          // the hook is what stopped the server
        }
      }
    }
    return 0;
  }
}
