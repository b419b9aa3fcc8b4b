package dev.gpudf.bench;

import static dev.gpudf.bench.KernelBenchmark.close;
import static dev.gpudf.bench.KernelBenchmark.gpuTime;
import static dev.gpudf.bench.KernelBenchmark.result;
import static dev.gpudf.bench.KernelBenchmark.time;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.GroupBy;
import dev.gpudf.kernels.Join;
import dev.gpudf.kernels.Reduction;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The hash operators on device-resident data (issue figures): group-by SUM of float64 by int32
 * keys over 100M rows with 1M groups, 1K groups and all keys distinct; inner-join gather maps of
 * 100M probe rows against 1M unique build keys and against 100M; then the CPU twins for the 1M
 * cases. Times as in {@link KernelBenchmark} (median of CUDA event times, and wall time); rows/s
 * and effective GB/s count the input bytes once. {@code benchmarks/peer_hash.py} measures the
 * CuPy and pyarrow peers on data of the same shape.
 *
 * <p>{@code HashBenchmark [rows] [reps] [cpu]}: cpu = 0 skips the CPU twins.
 */
public final class HashBenchmark {
  private HashBenchmark() {}

  public static void main(String[] argv) {
    KernelBenchmark.Args args = KernelBenchmark.Args.parse(argv);
    int rows = args.rows();
    int reps = args.reps();
    boolean cpuToo = args.cpuToo();
    try (Gpu gpu = Gpu.open(0); BufferAllocator a = gpu.pinnedAllocator().newChildAllocator("bench", 0, Long.MAX_VALUE);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      System.out.printf("device %s, %d rows, %d reps%n", gpu.device().name(), rows, reps);
      List<GroupBy.Agg> sum = List.of(new GroupBy.Agg(Reduction.SUM, 1));
      for (int groups : new int[] {1_000_000, 1_000, 0}) {
        String label = groups == 0 ? "distinct" : groups >= 1_000_000 ? groups / 1_000_000 + "m" : groups / 1_000 + "k";
        try (VectorSchemaRoot in = withValues(a, keys(a, "k", rows, groups, 7), 8);
            DeviceTable d = DeviceTable.fromArrow(gpu, in, g.stream())) {
          double[] ms = gpuTime(gpu, g, reps,
              () -> close(GroupBy.aggregate(g, d, new int[] {0}, sum, List.of("k", "s"))));
          result("groupby_sum_" + label, ms, rate(rows, 12L * rows, ms[0]));
          if (cpuToo && groups == 1_000_000) {
            try (HostTable h = HostTable.fromArrow(in)) {
              result("cpu_groupby_sum_" + label, time(1,
                  () -> close(GroupBy.aggregate(cpu, h, new int[] {0}, sum, List.of("k", "s")))), "");
            }
          }
        }
      }
      for (int build : new int[] {1_000_000, rows}) {
        String label = "join_maps_" + rows / 1_000_000 + "m_" + build / 1_000_000 + "m";
        try (VectorSchemaRoot probe = keys(a, "k", rows, build, 9); VectorSchemaRoot unique = permutation(a, build, 10);
            DeviceTable p = DeviceTable.fromArrow(gpu, probe, g.stream());
            DeviceTable b = DeviceTable.fromArrow(gpu, unique, g.stream())) {
          int[] k = {0};
          double[] ms = gpuTime(gpu, g, reps, () -> close(Join.gatherMaps(g, p, b, k, k, Join.Kind.INNER)));
          try (DeviceTable maps = Join.gatherMaps(g, p, b, k, k, Join.Kind.INNER)) {
            result(label, ms, rate(rows + (long) build, 4L * (rows + (long) build), ms[0]) + ", " + maps.rowCount()
                + " pairs");
          }
          if (cpuToo && build == 1_000_000) {
            try (HostTable hp = HostTable.fromArrow(probe); HostTable hb = HostTable.fromArrow(unique)) {
              result("cpu_" + label.replace("maps", "inner"), time(1,
                  () -> close(Join.join(cpu, hp, hb, k, k, Join.Kind.INNER, List.of("l", "r")))), "(joined key columns)");
            }
          }
        }
      }
    }
  }

  private static String rate(long rows, long bytes, double ms) {
    return String.format("%.2f G rows/s, %.0f GB/s effective", rows / (ms * 1e6), bytes / (ms * 1e6));
  }

  /** INT32 keys uniform in [0, range), or a permutation of [0, rows) when range is 0. */
  private static VectorSchemaRoot keys(BufferAllocator a, String name, int rows, int range, long seed) {
    if (range == 0) {
      return permutation(a, rows, seed);
    }
    IntVector v = new IntVector(name, a);
    v.allocateNew(rows);
    SplittableRandom r = new SplittableRandom(seed);
    long d = v.getDataBuffer().memoryAddress();
    for (int i = 0; i < rows; i++) {
      MemoryUtil.putInt(d + 4L * i, r.nextInt(range));
    }
    v.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    v.setValueCount(rows);
    return KernelBenchmark.root(v);
  }

  /** [0, rows) shuffled: unique build keys. */
  private static VectorSchemaRoot permutation(BufferAllocator a, int rows, long seed) {
    IntVector v = new IntVector("k", a);
    v.allocateNew(rows);
    long d = v.getDataBuffer().memoryAddress();
    for (int i = 0; i < rows; i++) {
      MemoryUtil.putInt(d + 4L * i, i);
    }
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = rows - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int t = MemoryUtil.getInt(d + 4L * i);
      MemoryUtil.putInt(d + 4L * i, MemoryUtil.getInt(d + 4L * j));
      MemoryUtil.putInt(d + 4L * j, t);
    }
    v.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    v.setValueCount(rows);
    return KernelBenchmark.root(v);
  }

  /** {@code keys} (taken over) with a FLOAT64 column of uniform values beside it. */
  private static VectorSchemaRoot withValues(BufferAllocator a, VectorSchemaRoot keys, long seed) {
    try (VectorSchemaRoot values = KernelBenchmark.doubles(a, "v", keys.getRowCount(), seed)) {
      List<FieldVector> vs = new ArrayList<>(keys.getFieldVectors());
      FieldVector v = values.getVector(0);
      FieldVector moved = (FieldVector) v.getTransferPair(a).getTo();
      v.makeTransferPair(moved).transfer();
      vs.add(moved);
      VectorSchemaRoot both = new VectorSchemaRoot(vs);
      both.setRowCount(keys.getRowCount());
      return both;
    }
  }
}
