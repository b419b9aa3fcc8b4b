package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.flight.GpudfFlightServer;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The GPU pipeline of {@code clients/python/examples/pipeline.py} against a GPU server holding
 * TPC-H lineitem and orders at {@code sf}: SQL to a PyTorch feature matrix, a model trained on
 * the device, its predictions ingested back and joined in SQL, by the device hand-off and by
 * host Arrow; prints the script's JSON and the server's count of bytes copied to the host.
 *
 * <pre>PipelineBenchmark [sf=10] [steps=20]</pre>
 */
public final class PipelineBenchmark {
  private PipelineBenchmark() {}

  public static void main(String[] args) throws Exception {
    double sf = args.length > 0 ? Double.parseDouble(args[0]) : 10;
    int steps = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0);
        GpuSession session = GpuSession.gpu(gpu, allocator)) {
      long t0 = System.nanoTime();
      int cores = Runtime.getRuntime().availableProcessors();
      for (TpchTable<?> t : java.util.List.of(TpchTable.LINE_ITEM, TpchTable.ORDERS)) {
        try (VectorSchemaRoot root = TpchTables.arrow(allocator, t, sf, cores, rows -> { })) {
          session.catalog().register(t.getTableName(), root);
        }
      }
      System.out.printf("device %s; TPC-H SF%s lineitem and orders generated and loaded in %.1f s%n", gpu.device().name(), sf,
          (System.nanoTime() - t0) / 1e9);
      try (GpudfFlightServer server = GpudfFlightServer.start(session, allocator,
          GpudfFlightServer.Options.plain("localhost", 0))) {
        long before = gpu.copier().bytesToHost();
        ProcessBuilder pb = new ProcessBuilder("python3", "clients/python/examples/pipeline.py", "--port",
            String.valueOf(server.port()), "--steps", String.valueOf(steps)).redirectErrorStream(true);
        pb.environment().merge("PYTHONPATH", "clients/python", (old, add) -> add + ":" + old);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        System.out.println("PIPELINE rc=" + rc + " " + out.strip());
        System.out.printf("RESULT server_bytes_to_host_both_paths %d (the host path's answers and ingest go through it)%n",
            gpu.copier().bytesToHost() - before);
        if (rc != 0) {
          System.exit(1);
        }
      }
    }
  }
}
