package dev.gpudf.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.flight.GpudfFlightServer;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Device arrays into gpudf from another process: a GPU server here, and two CuPy clients
 * ({@code clients/python/examples}): {@code ingest_roundtrip.py} (every kind of column, SQL over
 * them, an export changed in CuPy and ingested again, joined; its checks), then {@code
 * ingest_bench.py} ({@code rows} rows of four numeric columns: the IPC ingest against CuPy's own
 * device copy of the same bytes and against the host path through Flight SQL's bulk ingest). The
 * tables the clients made are checked here with SQL against the sums the clients computed.
 *
 * <pre>IngestBenchmark [rows=100000000] [reps=5]</pre>
 */
public final class IngestBenchmark {
  private IngestBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 100_000_000;
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    boolean ok = true;
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0);
        GpuSession session = GpuSession.gpu(gpu, allocator);
        GpudfFlightServer server = GpudfFlightServer.start(session, allocator, GpudfFlightServer.Options.plain("localhost", 0))) {
      System.out.printf("device %s%n", gpu.device().name());
      long before = gpu.copier().bytesToHost();
      JsonNode trip = python("ingest_roundtrip.py", server.port());
      System.out.println("ROUNDTRIP " + trip);
      ok &= trip.path("all_ok").asBoolean(false);
      System.out.printf("RESULT roundtrip_all_checks_pass %s%n", trip.path("all_ok").asBoolean(false));
      System.out.printf("RESULT server_bytes_to_host_during_roundtrip %d%n", gpu.copier().bytesToHost() - before);

      JsonNode bench = python("ingest_bench.py", server.port(), "--rows", String.valueOf(rows), "--reps", String.valueOf(reps));
      System.out.println("BENCH " + bench);
      if (bench.has("median_ms")) {
        JsonNode m = bench.path("median_ms");
        double gb = bench.path("bytes").asDouble() / 1e9;
        System.out.printf("RESULT bytes %.3f GB (%,d rows x 24 bytes)%n", gb, rows);
        System.out.printf("RESULT cupy_device_copy_ms %.2f (%.0f GB/s read + written)%n", m.path("copy").asDouble(),
            2 * gb / (m.path("copy").asDouble() / 1e3));
        part(m, bench, "ipc_ingest", "ipc_over_copy", bench.path("last_ingest"), "the server maps the arrays anew");
        part(m, bench, "ipc_ingest_kept", "kept_over_copy", bench.path("last_ingest_kept"),
            "the arrays' allocations kept mapped from an earlier call");
        System.out.printf("RESULT unmap %s%n", bench.path("unmap"));
        System.out.printf("RESULT ipc_ingest_kept_first_ms %.2f (the first of the timed kept calls; the median is above)%n",
            bench.path("kept_first_ms").asDouble());
        System.out.printf("RESULT empty_action_ms %.2f (an action that does nothing, end to end: the floor under every call)%n",
            m.path("empty_action").asDouble());
        System.out.printf("RESULT host_path_ingest_ms %.2f (%.1fx the IPC ingest)%n", m.path("host_ingest").asDouble(),
            bench.path("host_over_ipc").asDouble());
        ok &= checkSums(session, bench.path("sums"), rows);
      } else {
        ok = false;
      }
    }
    System.out.println("RESULT all_ok " + ok);
    if (!ok) {
      System.exit(1);
    }
  }

  /** One RESULT line: the median of {@code key}, its ratio to the copy, and the server's parts of its last call. */
  private static void part(JsonNode m, JsonNode bench, String key, String ratio, JsonNode last, String what) {
    System.out.printf("RESULT %s_ms %.2f (%.2fx the device copy; %s; the server's part %.2f ms: mapping %.2f,"
        + " copying %.2f, checking %.2f, making the table %.2f; allocations mapped anew %d, found mapped %d;"
        + " the client's part: describing the arrays %.2f ms, the call %.2f ms)%n", key,
        m.path(key).asDouble(), bench.path(ratio).asDouble(), what, last.path("seconds").asDouble() * 1e3,
        last.path("map_seconds").asDouble() * 1e3, last.path("copy_seconds").asDouble() * 1e3,
        last.path("check_seconds").asDouble() * 1e3, last.path("table_seconds").asDouble() * 1e3,
        last.path("mappings_opened").asInt(), last.path("mappings_reused").asInt(),
        last.path("client_prepare_ms").asDouble(), last.path("client_call_ms").asDouble());
  }

  /** The tables {@code bench} and {@code bench_host} hold the rows the client sent: its count and sums. */
  private static boolean checkSums(GpuSession session, JsonNode sums, int rows) {
    boolean ok = true;
    for (String table : List.of("bench", "bench_host")) {
      try (VectorSchemaRoot r = session.query("SELECT COUNT(*), SUM(a), SUM(CAST(c AS BIGINT)), SUM(b), SUM(CAST(d AS DOUBLE)) FROM "
          + table)) {
        boolean same = ((Number) r.getVector(0).getObject(0)).longValue() == rows
            && ((Number) r.getVector(1).getObject(0)).longValue() == sums.path("a").asLong()
            && ((Number) r.getVector(2).getObject(0)).longValue() == sums.path("c").asLong()
            && close(((Number) r.getVector(3).getObject(0)).doubleValue(), sums.path("b").asDouble())
            && close(((Number) r.getVector(4).getObject(0)).doubleValue(), sums.path("d").asDouble());
        System.out.printf("CHECK %s holds the client's rows (count and sums): %s%n", table, same ? "yes" : "NO");
        ok &= same;
      }
    }
    return ok;
  }

  private static boolean close(double a, double b) {
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  }

  /** Runs {@code clients/python/examples/<script> --port <port> <args>} and parses its last JSON line. */
  private static JsonNode python(String script, int port, String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("python3", "clients/python/examples/" + script, "--port",
        String.valueOf(port)));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().merge("PYTHONPATH", "clients/python", (old, add) -> add + ":" + old);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int rc = p.waitFor();
    String line = out.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElse(null);
    if (rc != 0 || line == null) {
      System.out.println("PYTHON " + script + " rc=" + rc + "\n" + out);
      return new ObjectMapper().createObjectNode();
    }
    return new ObjectMapper().readTree(line);
  }
}
