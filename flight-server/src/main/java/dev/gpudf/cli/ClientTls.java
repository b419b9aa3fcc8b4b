package dev.gpudf.cli;

import dev.gpudf.columnar.error.UserException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import picocli.CommandLine.Option;

/**
 * How a command that connects to a server trusts a TLS server: by default its certificate must
 * chain to a CA the JDK trusts; {@code --tls-ca FILE} names the PEM certificates to trust instead
 * (a private CA, or a self-signed server's own certificate); {@code --tls-no-verify} skips the check
 * and says so, since then anyone on the path can read and change the traffic.
 */
final class ClientTls {
  @Option(names = "--tls-ca", description = "PEM certificates to trust for a TLS server (a private CA, or a self-signed "
      + "server's certificate); default: the CAs the JDK trusts")
  Path ca;

  @Option(names = "--tls-no-verify", description = "Do not verify the TLS server's certificate (anyone on the network "
      + "path could read and change the traffic)")
  boolean noVerify;

  /** A client of {@code host:port}, over TLS when {@code tls}; the caller closes it. */
  FlightClient connect(BufferAllocator allocator, String host, int port, boolean tls) {
    if (!tls && (ca != null || noVerify)) {
      throw new UserException("--tls-ca and --tls-no-verify apply to a TLS server only (grpc+tls://, or --tls)");
    }
    if (ca != null && noVerify) {
      throw new UserException("--tls-ca and --tls-no-verify contradict each other: use one");
    }
    FlightClient.Builder b = FlightClient.builder(allocator, tls ? Location.forGrpcTls(host, port)
        : Location.forGrpcInsecure(host, port));
    if (noVerify) {
      System.err.println("warning: --tls-no-verify: the server's certificate is not checked");
      b.verifyServer(false);
    } else if (ca != null) {
      try {
        // the builder reads the stream when it builds: hand it the bytes, not an open file
        b.trustedCertificates(new ByteArrayInputStream(Files.readAllBytes(ca)));
      } catch (IOException e) {
        throw new UserException("cannot read --tls-ca " + ca + ": " + e.getMessage(), e);
      }
    }
    return b.build();
  }

  /** What a failed call means when the cause may be a certificate this client does not trust. */
  String explain(FlightRuntimeException e, boolean tls) {
    if (tls && !noVerify && e.status().code() == FlightStatusCode.UNAVAILABLE) {
      return e.getMessage() + " (if the server's certificate is not trusted: pass --tls-ca FILE with its CA or its own"
          + " certificate, or --tls-no-verify to skip the check)";
    }
    return e.getMessage();
  }
}
