package dev.gpudf.cli;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.SampleData;
import dev.gpudf.columnar.cuda.Cuda;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.KernelModule;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compare.VectorEqualsVisitor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gpudf info}: the Java runtime, which backends are usable and why not, each GPU, and a
 * host -> device -> host round trip of a small table with its throughput, checked for equality.
 */
@Command(name = "info", description = "Show the runtime, backends and GPUs, and time a host<->device round trip")
final class InfoCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--round-trip-mib", defaultValue = "256", description = "Size of the round-trip table in MiB (default ${DEFAULT-VALUE})")
  int roundTripMib;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    Runtime rt = Runtime.getRuntime();
    out.printf("gpudf       0.1.0-SNAPSHOT%n");
    out.printf("java        %s (%s %s)%n", System.getProperty("java.version"), System.getProperty("java.vm.vendor"),
        System.getProperty("java.vm.name"));
    out.printf("host        %d cores, max heap %,d MiB%n", rt.availableProcessors(), rt.maxMemory() >> 20);
    out.printf("backend cpu available%n");
    Cuda.Availability cuda = Cuda.availability();
    if (!cuda.available()) {
      out.printf("backend gpu off: %s%n", cuda.reason());
      out.printf("kernels     %s%n", KernelModule.status());
      out.flush();
      return 0;
    }
    out.printf("backend gpu available: %d device(s), CUDA driver %s%n", cuda.deviceCount(), cuda.driverVersionString());
    out.printf("kernels     %s%n", KernelModule.status());
    for (int d = 0; d < cuda.deviceCount(); d++) {
      try (Gpu gpu = Gpu.open(d)) {
        long[] mem = gpu.device().memoryInfo();
        out.printf("gpu %d       %s, compute %s, %d SMs, %,d MiB total, %,d MiB free%n", d, gpu.device().name(),
            gpu.device().computeCapability(), gpu.device().multiprocessors(), mem[1] >> 20, mem[0] >> 20);
        if (d == 0) {
          roundTrip(gpu, out);
        }
      }
    }
    out.flush();
    return 0;
  }

  private void roundTrip(Gpu gpu, PrintWriter out) {
    int rows = (int) ((long) roundTripMib << 20) / 16;
    try (BufferAllocator pinned = gpu.pinnedAllocator().newChildAllocator("info", 0, Long.MAX_VALUE);
        VectorSchemaRoot source = SampleData.idValue(pinned, rows);
        CudaStream stream = gpu.newStream()) {
      long bytes = 16L * rows;
      // one warm-up round trip pays for pool growth, pinning and class loading
      try (DeviceTable warm = DeviceTable.fromArrow(gpu, source, stream); VectorSchemaRoot r = warm.toArrow(pinned, stream)) {
        out.printf("round trip  warm-up done (%d rows)%n", r.getRowCount());
      }
      long t0 = System.nanoTime();
      try (DeviceTable table = DeviceTable.fromArrow(gpu, source, stream)) {
        long t1 = System.nanoTime();
        try (VectorSchemaRoot back = table.toArrow(pinned, stream)) {
          long t2 = System.nanoTime();
          boolean same = source.getFieldVectors().stream().allMatch(
              v -> VectorEqualsVisitor.vectorEquals(v, back.getVector(v.getName())));
          out.printf("round trip  %,d MiB pinned: host->device %.1f GB/s, device->host %.1f GB/s, data %s%n",
              bytes >> 20, bytes / (double) (t1 - t0), bytes / (double) (t2 - t1), same ? "identical" : "DIFFERENT");
          if (!same) {
            throw new IllegalStateException("round trip changed the data");
          }
        }
      }
    }
  }
}
