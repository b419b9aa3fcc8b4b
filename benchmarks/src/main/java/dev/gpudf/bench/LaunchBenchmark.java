package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.KernelLaunch;
import java.util.Arrays;
import java.util.Locale;
import org.apache.arrow.memory.RootAllocator;

/**
 * The fixed host costs every operator pays, whatever its rows: a kernel launch queued (a kernel
 * that has no work, with four and with fifteen arguments), a launch waited for, a read of one
 * value back to the host (a synchronisation), and a pool allocation with its release. Small
 * queries are made of hundreds of these, so they bound how fast such a query can be.
 *
 * <p>{@code LaunchBenchmark [count]}: each figure is the median over 5 rounds of {@code count}
 * (default 20,000) operations, in microseconds per operation, after a warm-up round.
 */
public final class LaunchBenchmark {
  private LaunchBenchmark() {}

  public static void main(String[] args) {
    int count = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0); Exec exec = Exec.onGpu(gpu, a);
        DeviceBuffer word = exec.allocateZeroed(64)) {
      // join_cross_kernel of 0 x 0 rows: 4 arguments, no work; join_count_kernel over 0 probe rows: 15
      report("launch, 4 arguments, queued", count, () -> KernelLaunch.launch("join_cross_kernel", 1, exec.stream(),
          0L, 0L, word, word), () -> exec.stream().synchronize());
      report("launch, 15 arguments, queued", count, () -> KernelLaunch.launch("join_count_kernel", 1, exec.stream(), word,
          word, 1, 0L, 1L, word, 0L, word, word, 0, 0L, word, word, word, word), () -> exec.stream().synchronize());
      report("launch, 4 arguments, waited for", count / 4, () -> {
        KernelLaunch.launch("join_cross_kernel", 1, exec.stream(), 0L, 0L, word, word);
        exec.stream().synchronize();
      }, () -> { });
      report("read one long back (pinned scratch)", count / 4, () -> exec.readLongs(word, 1), () -> { });
      report("allocate and free 1 MiB from the pool", count, () -> exec.allocate(1 << 20).close(),
          () -> exec.stream().synchronize());
    }
  }

  private static void report(String what, int count, Runnable op, Runnable drain) {
    double[] rounds = new double[5];
    for (int r = -1; r < rounds.length; r++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < count; i++) {
        op.run();
      }
      drain.run();
      if (r >= 0) {
        rounds[r] = (System.nanoTime() - t0) / 1e3 / count;
      }
    }
    Arrays.sort(rounds);
    System.out.printf(Locale.ROOT, "LAUNCH %-40s %8.2f us per operation (rounds %.2f .. %.2f)%n", what, rounds[2],
        rounds[0], rounds[4]);
  }
}
