package dev.gpudf.cli;

import java.util.concurrent.Callable;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code gpudf health}: exits 0 when a Flight server answers on the port (a refusal to an
 * unauthenticated caller counts as an answer), 1 otherwise; for container health checks.
 */
@Command(name = "health", description = "Exit 0 if a gpudf Flight SQL server answers on the port, 1 if not")
final class HealthCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--host", defaultValue = "localhost", description = "Server address (default ${DEFAULT-VALUE})")
  String host;

  @Option(names = "--port", defaultValue = "31337", description = "Server port (default ${DEFAULT-VALUE})")
  int port;

  @picocli.CommandLine.Mixin
  ClientTls trust;

  @Option(names = "--tls", description = "Connect with TLS (the certificate verified: see --tls-ca, --tls-no-verify)")
  boolean tls;

  @Override
  public Integer call() throws Exception {
    try (RootAllocator allocator = new RootAllocator();
        FlightClient client = trust.connect(allocator, host, port, tls)) {
      client.listActions().forEach(a -> { });
      spec.commandLine().getOut().println("healthy");
      return 0;
    } catch (FlightRuntimeException e) {
      if (e.status().code() == FlightStatusCode.UNAUTHENTICATED) {
        spec.commandLine().getOut().println("healthy (asks for credentials)");
        return 0;
      }
      spec.commandLine().getErr().println("unhealthy: " + e.status().code() + " " + trust.explain(e, tls));
      return 1;
    } finally {
      spec.commandLine().getOut().flush();
      spec.commandLine().getErr().flush();
    }
  }
}
