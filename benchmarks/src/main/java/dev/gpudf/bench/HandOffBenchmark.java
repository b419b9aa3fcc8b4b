package dev.gpudf.bench;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.flight.GpudfFlightServer;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The device hand-off end to end: a table of {@code rows} rows (id BIGINT, x DOUBLE, y INT with
 * one null in ten) on the GPU behind a Flight server, a filtering query over it handed to a CuPy
 * process ({@code clients/python/examples/handoff_sums.py}), whose sums must equal the server's.
 * Prints the hand-off latency next to the server's own query time and the copy path (the same
 * result brought to host Arrow), and the server's count of result bytes copied to the host.
 *
 * <pre>HandOffBenchmark [rows=100000000] [reps=5]</pre>
 */
public final class HandOffBenchmark {
  private HandOffBenchmark() {}

  static final String SQL = "SELECT id, x, y FROM t WHERE x > 0.25";
  static final String SUMS = "SELECT COUNT(*), SUM(id), SUM(x), SUM(y), COUNT(y) FROM t WHERE x > 0.25";

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 100_000_000;
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0);
        GpuSession session = GpuSession.gpu(gpu, allocator)) {
      try (VectorSchemaRoot t = table(allocator, rows)) {
        session.catalog().register("t", t);
      }
      System.out.printf("device %s, table t: %,d rows; query: %s%n", gpu.device().name(), rows, SQL);
      Object[] expected;
      try (VectorSchemaRoot sums = session.query(SUMS)) {
        expected = new Object[sums.getFieldVectors().size()];
        for (int i = 0; i < expected.length; i++) {
          expected[i] = sums.getVector(i).getObject(0);
        }
        System.out.println("RESULT server_sums " + java.util.Arrays.toString(expected));
      }
      double[] onDevice = new double[reps];
      double[] toHost = new double[reps];
      for (int r = 0; r < reps; r++) {
        long t0 = System.nanoTime();
        session.queryOnDevice(SQL).close();
        onDevice[r] = (System.nanoTime() - t0) / 1e6;
        t0 = System.nanoTime();
        session.query(SQL).close();
        toHost[r] = (System.nanoTime() - t0) / 1e6;
      }
      System.out.printf("RESULT server_query_on_device_ms %.2f (median of %d)%n", TpchBenchmark.median(onDevice), reps);
      System.out.printf("RESULT server_query_to_host_arrow_ms %.2f (median of %d: the copy path)%n",
          TpchBenchmark.median(toHost), reps);
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0))) {
        long before = gpu.copier().bytesToHost();
        ProcessBuilder pb = new ProcessBuilder("python3", "clients/python/examples/handoff_sums.py", "--port",
            String.valueOf(server.port()), "--sql", SQL, "--reps", String.valueOf(reps)).redirectErrorStream(true);
        pb.environment().merge("PYTHONPATH", "clients/python", (old, add) -> add + ":" + old);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        System.out.println("CONSUMER rc=" + rc + " " + out.strip());
        if (rc == 0) {
          System.out.println("CHECK the consumer's sums equal the server's: " + (agree(expected, out) ? "yes" : "NO"));
        }
        System.out.printf("RESULT server_bytes_to_host_during_handoffs %d%n", gpu.copier().bytesToHost() - before);
        // the same server through ADBC's Flight SQL driver, where the host has it
        Process adbc = new ProcessBuilder("python3", "clients/python/examples/adbc_query.py", "--port",
            String.valueOf(server.port())).redirectErrorStream(true).start();
        String adbcOut = new String(adbc.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        System.out.println("ADBC rc=" + adbc.waitFor() + " " + adbcOut);
        System.out.printf("RESULT leases_left %d%n", server.deviceLeases());
      }
      try (DeviceTable check = session.queryOnDevice(SQL)) {
        System.out.printf("RESULT result_rows %d%n", check.rowCount());
      }
    }
  }

  /** Whether the CuPy sums in the consumer's JSON line equal {@code server}: COUNT(*), SUM(id), SUM(x), SUM(y), COUNT(y). */
  static boolean agree(Object[] server, String consumerOutput) throws java.io.IOException {
    String line = consumerOutput.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElse("{}");
    com.fasterxml.jackson.databind.JsonNode sums = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line).path("sums");
    long count = ((Number) server[0]).longValue();
    double x = ((Number) server[2]).doubleValue();
    return sums.path("id").path("count").asLong() == count && sums.path("x").path("count").asLong() == count
        && sums.path("id").path("sum").asLong() == ((Number) server[1]).longValue()
        && Math.abs(sums.path("x").path("sum").asDouble() - x) <= 1e-9 * Math.abs(x)
        && sums.path("y").path("sum").asLong() == ((Number) server[3]).longValue()
        && sums.path("y").path("count").asLong() == ((Number) server[4]).longValue();
  }

  /** id = row number, x uniform in [0, 1), y a small int with every tenth row null; filled in parallel. */
  static VectorSchemaRoot table(BufferAllocator a, int rows) {
    BigIntVector id = new BigIntVector("id", a);
    Float8Vector x = new Float8Vector("x", a);
    IntVector y = new IntVector("y", a);
    id.allocateNew(rows);
    x.allocateNew(rows);
    y.allocateNew(rows);
    long ids = id.getDataBuffer().memoryAddress();
    long xs = x.getDataBuffer().memoryAddress();
    long ys = y.getDataBuffer().memoryAddress();
    int parts = 64;
    IntStream.range(0, parts).parallel().forEach(part -> {
      SplittableRandom r = new SplittableRandom(part);
      // whole bytes of the validity bitmaps per part: parts start on multiples of 8 rows
      int per = ((rows + parts - 1) / parts + 7) / 8 * 8;
      for (int i = part * per; i < Math.min(rows, (part + 1) * per); i++) {
        MemoryUtil.putLong(ids + 8L * i, i);
        MemoryUtil.putLong(xs + 8L * i, Double.doubleToRawLongBits(r.nextDouble()));
        MemoryUtil.putInt(ys + 4L * i, r.nextInt(1000));
      }
    });
    id.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    x.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    y.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    for (int i = 0; i < rows; i += 10) {
      y.setNull(i);
    }
    List<FieldVector> vectors = new ArrayList<>(List.of(id, x, y));
    for (FieldVector v : vectors) {
      v.setValueCount(rows);
    }
    return new VectorSchemaRoot(vectors);
  }
}
