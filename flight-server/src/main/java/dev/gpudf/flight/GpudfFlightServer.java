package dev.gpudf.flight;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.BasicCallHeaderAuthenticator;
import org.apache.arrow.flight.auth2.GeneratedBearerTokenAuthenticator;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A running Flight SQL server over a {@link GpuSession}: plain gRPC, or TLS when a certificate
 * chain and key (PEM) are given; basic auth exchanged for bearer tokens when a users file is
 * given ({@link Users}), otherwise open to whoever reaches the port. Inbound messages are capped
 * (a client cannot make the server buffer an arbitrarily large batch). Closing stops the server
 * and frees its memory, after every call's handler has ended; the session stays the caller's.
 */
public final class GpudfFlightServer implements AutoCloseable {
  /** Inbound message cap when none is given: 256 MiB. */
  public static final int DEFAULT_MAX_INBOUND_BYTES = 256 << 20;

  /**
   * Where and how to listen; {@code users}, {@code tlsCert}, {@code tlsKey} and
   * {@code dataDirectory} (where changed tables are written back) may be null. Port 0 picks a
   * free port.
   */
  public record Options(String host, int port, Path users, Path tlsCert, Path tlsKey, int maxInboundBytes,
      Path dataDirectory) {
    /** Plain gRPC on {@code host:port}, no users, the default message cap, nothing written back. */
    public static Options plain(String host, int port) {
      return new Options(host, port, null, null, null, DEFAULT_MAX_INBOUND_BYTES, null);
    }

    public Options withUsers(Path file) {
      return new Options(host, port, file, tlsCert, tlsKey, maxInboundBytes, dataDirectory);
    }

    public Options withTls(Path cert, Path key) {
      return new Options(host, port, users, cert, key, maxInboundBytes, dataDirectory);
    }

    public Options withMaxInboundBytes(int bytes) {
      return new Options(host, port, users, tlsCert, tlsKey, bytes, dataDirectory);
    }

    public Options withDataDirectory(Path dir) {
      return new Options(host, port, users, tlsCert, tlsKey, maxInboundBytes, dir);
    }
  }

  /** How long calls in flight may run on once the server is asked to close, before they are interrupted. */
  private static final long CLOSE_GRACE_MS = 3_000;
  /** How long a stopped handler may take to end (a query stops at its next check). */
  private static final long HANDLER_END_MS = 60_000;

  private final BufferAllocator allocator;
  private final GpudfFlightSqlProducer producer;
  private final FlightServer server;
  private final ExecutorService handlers;
  private final boolean tls;

  private GpudfFlightServer(BufferAllocator allocator, GpudfFlightSqlProducer producer, FlightServer server,
      ExecutorService handlers, boolean tls) {
    this.allocator = allocator;
    this.producer = producer;
    this.server = server;
    this.handlers = handlers;
    this.tls = tls;
  }

  /** The threads that run calls: the server's own, so that closing it can wait for them. */
  private static ExecutorService handlerThreads() {
    AtomicInteger count = new AtomicInteger();
    return Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "gpudf-flight-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts serving {@code session}; result batches come from a child of {@code parent}. The caller closes the server. */
  public static GpudfFlightServer start(GpuSession session, BufferAllocator parent, Options options) {
    if ((options.tlsCert() == null) != (options.tlsKey() == null)) {
      throw new UserException("TLS needs both a certificate chain and a private key");
    }
    boolean tls = options.tlsCert() != null;
    Location location = tls ? Location.forGrpcTls(options.host(), options.port())
        : Location.forGrpcInsecure(options.host(), options.port());
    BufferAllocator allocator = parent.newChildAllocator("flight-server", 0, Long.MAX_VALUE);
    Users users = options.users() == null ? null : Users.read(options.users());
    GpudfFlightSqlProducer producer = new GpudfFlightSqlProducer(session, allocator, options.dataDirectory(), users);
    ExecutorService handlers = handlerThreads();
    try {
      FlightServer.Builder builder = FlightServer.builder(allocator, location, producer)
          .executor(handlers)
          .maxInboundMessageSize(options.maxInboundBytes())
          .transportHint("grpc.builderConsumer", (java.util.function.Consumer<io.grpc.netty.NettyServerBuilder>)
              netty -> netty.intercept(new org.apache.arrow.flight.InboundMessageCheck())
                  .addStreamTracerFactory(org.apache.arrow.flight.InboundMessageCheck.TRACER));
      if (tls) {
        try {
          builder.useTls(options.tlsCert().toFile(), options.tlsKey().toFile());
        } catch (IOException e) {
          throw new UserException("cannot read the TLS certificate or key: " + e.getMessage(), e);
        }
      }
      if (options.users() != null) {
        builder.headerAuthenticator(new GeneratedBearerTokenAuthenticator(
            new BasicCallHeaderAuthenticator(users)));
      }
      FlightServer server;
      try {
        server = builder.build();
      } catch (IllegalArgumentException e) {
        // gRPC's words for a certificate or key it cannot use
        throw new UserException("cannot use TLS certificate " + options.tlsCert() + " with key " + options.tlsKey() + ": "
            + e.getMessage(), e);
      }
      try {
        server.start();
      } catch (IOException e) {
        server.shutdown();
        // a port in use or not ours to take: the operator's to fix, said in one line
        throw new UserException("cannot listen on " + options.host() + ":" + options.port() + ": "
            + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
      }
      return new GpudfFlightServer(allocator, producer, server, handlers, tls);
    } catch (RuntimeException e) {
      handlers.shutdown();
      producer.close();
      allocator.close();
      throw e;
    }
  }

  /** The port it listens on (the one picked when 0 was asked for). */
  public int port() {
    return server.getPort();
  }

  /** Whether clients must use TLS. */
  public boolean tls() {
    return tls;
  }

  /** Statement handles the producer holds (see {@link GpudfFlightSqlProducer#openHandles}). */
  public int openHandles() {
    return producer.openHandles();
  }

  /** Device hand-off leases held now (see {@link DeviceHandOff}). */
  public int deviceLeases() {
    return producer.deviceLeases();
  }

  /** Bytes the server's own allocator holds now (result batches in flight). */
  public long allocatedBytes() {
    return allocator.getAllocatedMemory();
  }

  /** Stops accepting calls and ends {@link #awaitTermination}; {@link #close} still frees the server. */
  public void stop() {
    server.shutdown();
  }

  /** Blocks until the server shuts down. */
  public void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  /**
   * Stops the server: calls in flight get {@value #CLOSE_GRACE_MS} ms to end, then result streams
   * still sending (to a client that stopped reading) and queries still running are stopped, and the
   * server's memory is freed only once every call's handler has ended. gRPC reports a server
   * terminated once its connections are closed, while a handler may still run on the call threads
   * and hold result batches: closing the allocator then fails on memory about to be freed.
   */
  @Override
  public void close() throws InterruptedException {
    try {
      server.shutdown();
      if (!server.awaitTermination(CLOSE_GRACE_MS, TimeUnit.MILLISECONDS)) {
        producer.stopCalls();
      }
      server.close();
      handlers.shutdown();
      if (!handlers.awaitTermination(HANDLER_END_MS, TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("a Flight call's handler did not end within " + HANDLER_END_MS / 1000
            + " s of the server closing; its memory cannot be freed");
      }
    } finally {
      producer.close();
      allocator.close();
    }
  }
}
