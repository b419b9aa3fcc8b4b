package dev.gpudf.bench;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.CudaEvent;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Filter;
import dev.gpudf.kernels.KernelLaunch;
import dev.gpudf.kernels.Reduce;
import dev.gpudf.kernels.Reduction;
import dev.gpudf.kernels.Sort;
import dev.gpudf.kernels.SortKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The kernels on device-resident data, 100M rows by default: device copy bandwidth, sum of
 * float64, filter of float64 at 50% selectivity, sort and argsort of int32, a two-key
 * (int32, float64) sort, top-100; then the CPU twins on the same data. Each GPU figure is the
 * median of {@code reps} calls after a JIT warm-up, timed two ways: CUDA events on the query's
 * stream around the call (the GPU timeline, as the CuPy peer is timed) and wall time from the
 * Java call until its stream is idle. Lines starting {@code RESULT} (event time first) are read
 * by {@code benchmarks/compare.py}, with the {@code ROOFLINE} lines: each kernel's least traffic
 * (inputs read once, output written once) over the device copy bandwidth measured first.
 *
 * <p>{@code KernelBenchmark [rows] [reps] [cpu]}: cpu = 0 skips the CPU twins.
 */
public final class KernelBenchmark {
  /** The arguments of the device benchmarks: {@code [rows] [reps] [cpu]} (cpu = 0 skips the CPU twins). */
  record Args(int rows, int reps, boolean cpuToo) {
    static Args parse(String[] args) {
      return new Args(args.length > 0 ? Integer.parseInt(args[0]) : 100_000_000, args.length > 1 ? Integer.parseInt(args[1]) : 5,
          args.length <= 2 || !args[2].equals("0"));
    }
  }

  public static void main(String[] argv) {
    Args args = Args.parse(argv);
    int rows = args.rows();
    int reps = args.reps();
    boolean cpuToo = args.cpuToo();
    try (Gpu gpu = Gpu.open(0); BufferAllocator a = gpu.pinnedAllocator().newChildAllocator("bench", 0, Long.MAX_VALUE);
        Exec g = Exec.onGpu(gpu, a); Exec cpu = Exec.onCpu(a)) {
      System.out.printf("device %s, %d rows, %d reps%n", gpu.device().name(), rows, reps);
      double copyMs = copyMillis(gpu, g, 8L * rows, reps);
      double copyGBs = 2.0 * 8 * rows / (copyMs * 1e6);
      result("device_copy_f64", copyMs, String.format("%.0f GB/s counting bytes read + written", copyGBs));
      // each kernel's least traffic (its inputs read once, its output written once) at the copy's bandwidth
      long n = rows;
      roofline("sum_f64", 8 * n, copyGBs);
      roofline("sum_f64_kernel_only", 8 * n, copyGBs);
      roofline("filter_f64_50pct", 8 * n + n / 8 + 4 * n, copyGBs);
      roofline("sort_i32", 8 * n, copyGBs);
      roofline("argsort_i32", 8 * n, copyGBs);
      roofline("sort_i32_f64", 24 * n, copyGBs);
      roofline("topn_100_f64", 8 * n, copyGBs);
      try (VectorSchemaRoot x = doubles(a, "x", rows, 1); VectorSchemaRoot mask = mask(a, rows, 2);
          VectorSchemaRoot keys = ints(a, rows, 3); VectorSchemaRoot twoKeys = twoKeys(keys, x);
          DeviceTable dx = DeviceTable.fromArrow(gpu, x, g.stream());
          DeviceTable dmask = DeviceTable.fromArrow(gpu, mask, g.stream());
          DeviceTable dk = DeviceTable.fromArrow(gpu, keys, g.stream());
          DeviceTable dkv = DeviceTable.fromArrow(gpu, twoKeys, g.stream())) {
        double[] sum = gpuTime(gpu, g, reps, () -> Reduce.reduce(g, dx.column(0), Reduction.SUM));
        for (int k = 0; k < 2; k++) {
          double gbs = 8.0 * rows / (sum[k] * 1e6);
          System.out.printf("sum_f64 %s: %.0f GB/s read = %.0f%% of the copy bandwidth%n", k == 0 ? "event time" : "wall time",
              gbs, 100 * gbs / copyGBs);
        }
        result("sum_f64", sum, "");
        // the ticket reset and the kernel alone (result left on the device): how much of sum_f64 is the call around it
        int grid = KernelLaunch.gridFor(gpu.device(), rows);
        long ticket = 16L * (grid + 1);
        try (DeviceBuffer partials = g.allocate(ticket + 8)) {
          result("sum_f64_kernel_only", gpuTime(gpu, g, reps, () -> {
            g.zero(partials, ticket, 4);
            KernelLaunch.launch("reduce_sum_f64_kernel", grid, g.stream(), dx.column(0).data(), null, (long) rows, partials,
                partials.address() + ticket);
            return null;
          }), "");
        }
        hostSteps(g, dx.column(0), grid);
        result("filter_f64_50pct", gpuTime(gpu, g, reps, () -> close(Filter.filter(g, dx, dmask.column(0)))), "");
        result("sort_i32", gpuTime(gpu, g, reps, () -> close(Sort.sort(g, dk, List.of(SortKey.asc(0))))), "");
        result("argsort_i32", gpuTime(gpu, g, reps, () -> close(Sort.argsort(g, dk, List.of(SortKey.asc(0))))), "");
        result("sort_i32_f64", gpuTime(gpu, g, reps,
            () -> close(Sort.sort(g, dkv, List.of(SortKey.asc(0), SortKey.asc(1))))), "");
        if (Boolean.getBoolean("gpudf.debug.profileLaunches")) {
          profile("sort_i32", () -> close(Sort.sort(g, dk, List.of(SortKey.asc(0)))));
          profile("argsort_i32", () -> close(Sort.argsort(g, dk, List.of(SortKey.asc(0)))));
          profile("sum_f64", () -> Reduce.reduce(g, dx.column(0), Reduction.SUM));
        }
        result("topn_100_f64", gpuTime(gpu, g, reps, () -> close(Sort.topN(g, dx, List.of(SortKey.desc(0)), 100))), "");
      }
      if (cpuToo) {
        try (VectorSchemaRoot x = doubles(a, "x", rows, 1); VectorSchemaRoot mask = mask(a, rows, 2);
            VectorSchemaRoot keys = ints(a, rows, 3); VectorSchemaRoot twoKeys = twoKeys(keys, x);
            HostTable hx = HostTable.fromArrow(x); HostTable hmask = HostTable.fromArrow(mask);
            HostTable hk = HostTable.fromArrow(keys); HostTable hkv = HostTable.fromArrow(twoKeys)) {
          System.out.printf("CPU twins: %d cores, one timed run each after one warm-up of the sum%n",
              Runtime.getRuntime().availableProcessors());
          Reduce.reduce(cpu, hx.column(0), Reduction.SUM);
          result("cpu_sum_f64", time(1, () -> Reduce.reduce(cpu, hx.column(0), Reduction.SUM)), "");
          result("cpu_filter_f64_50pct", time(1, () -> close(Filter.filter(cpu, hx, hmask.column(0)))), "");
          result("cpu_sort_i32", time(1, () -> close(Sort.sort(cpu, hk, List.of(SortKey.asc(0))))), "");
          result("cpu_argsort_i32", time(1, () -> close(Sort.argsort(cpu, hk, List.of(SortKey.asc(0))))), "");
          result("cpu_sort_i32_f64", time(1, () -> close(Sort.sort(cpu, hkv, List.of(SortKey.asc(0), SortKey.asc(1))))), "");
          result("cpu_topn_100_f64", time(1, () -> close(Sort.topN(cpu, hx, List.of(SortKey.desc(0)), 100))), "");
        }
      }
    }
  }

  static Object close(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return null;
  }

  /** A {@code ROOFLINE} line: {@code bytes} of least traffic at {@code gbps}, read by {@code benchmarks/compare.py}. */
  private static void roofline(String name, long bytes, double gbps) {
    System.out.printf("ROOFLINE %s %.3f ms (%,d bytes read + written at least)%n", name, bytes / (gbps * 1e6), bytes);
  }

  static void result(String name, double ms, String note) {
    System.out.printf("RESULT %s %.3f ms %s%n", name, ms, note);
  }

  static void result(String name, double[] eventAndWall, String note) {
    System.out.printf("RESULT %s %.3f ms (wall %.3f ms) %s%n", name, eventAndWall[0], eventAndWall[1], note);
  }

  /**
   * Where the wall time of one device sum goes, step by step (means over 500 sums after 200
   * warm-up ones, each starting on an idle stream): the steps of {@code GpuReduce} taken one at a
   * time with the host clock read between them, next to the whole {@code Reduce.reduce} call.
   */
  private static void hostSteps(Exec g, DeviceColumn x, int grid) {
    String[] names = {"allocate", "zero ticket", "launch (returns)", "readLongs (waits, copies)", "free", "Reduce.reduce whole"};
    double[] sums = new double[names.length];
    long ticket = 16L * (grid + 1);
    int warm = 200;
    int n = 500;
    for (int i = 0; i < warm + n; i++) {
      g.stream().synchronize();
      long t0 = System.nanoTime();
      DeviceBuffer out = g.allocate(ticket + 8);
      long t1 = System.nanoTime();
      g.zero(out, ticket, 4);
      long t2 = System.nanoTime();
      KernelLaunch.launch("reduce_sum_f64_kernel", grid, g.stream(), x.data(), null, (long) x.rowCount(), out,
          out.address() + ticket);
      long t3 = System.nanoTime();
      g.readLongs(out, 16L * grid, 2);
      long t4 = System.nanoTime();
      out.close();
      long t5 = System.nanoTime();
      Reduce.reduce(g, x, Reduction.SUM);
      long t6 = System.nanoTime();
      if (i >= warm) {
        long[] t = {t0, t1, t2, t3, t4, t5};
        for (int k = 0; k < 5; k++) {
          sums[k] += t[k + 1] - t[k];
        }
        sums[5] += t6 - t5;
      }
    }
    for (int k = 0; k < names.length; k++) {
      System.out.printf("HOST sum_f64 step %-26s %8.1f us%n", names[k], sums[k] / 1e3 / n);
    }
  }

  /** One call of {@code op} with every launch synchronised and timed: where its time goes, kernel by kernel. */
  private static void profile(String name, Supplier<Object> op) {
    KernelLaunch.takeProfile();
    long t0 = System.nanoTime();
    op.get();
    double total = (System.nanoTime() - t0) / 1e6;
    System.out.printf("PROFILE %s: %.3f ms in all (launches synchronised)%n", name, total);
    KernelLaunch.takeProfile().forEach((k, e) ->
        System.out.printf("PROFILE   %-32s %4d launches %8.3f ms%n", k, e[0], e[1] / 1e6));
  }

  /** Medians of event time and wall time over {@code reps} calls after {@link JitWarmUp}, in ms. */
  static double[] gpuTime(Gpu gpu, Exec g, int reps, Supplier<Object> op) {
    try (CudaEvent start = new CudaEvent(gpu.device(), true); CudaEvent end = new CudaEvent(gpu.device(), true)) {
      JitWarmUp.run(g.stream(), op::get);
      double[] ev = new double[reps];
      double[] wall = new double[reps];
      for (int r = 0; r < reps; r++) {
        long t0 = System.nanoTime();
        start.record(g.stream());
        op.get();
        end.record(g.stream());
        end.synchronize();
        wall[r] = (System.nanoTime() - t0) / 1e6;
        ev[r] = end.elapsedMillisSince(start);
      }
      Arrays.sort(ev);
      Arrays.sort(wall);
      return new double[] {ev[reps / 2], wall[reps / 2]};
    }
  }

  /** Median wall time of {@code reps} synchronous (CPU) calls after one warm-up, in milliseconds. */
  static double time(int reps, Supplier<Object> op) {
    op.get();
    double[] ms = new double[reps];
    for (int r = 0; r < reps; r++) {
      long t0 = System.nanoTime();
      op.get();
      ms[r] = (System.nanoTime() - t0) / 1e6;
    }
    Arrays.sort(ms);
    return ms[reps / 2];
  }

  /**
   * The device's memory bandwidth as a copy of {@code bytes} within it measures it (GB/s, bytes read
   * plus bytes written, median of {@code reps}): what a roofline divides a query's bytes by.
   */
  static double copyGBps(Gpu gpu, BufferAllocator a, long bytes, int reps) {
    try (Exec g = Exec.onGpu(gpu, a)) {
      return 2.0 * bytes / (copyMillis(gpu, g, bytes, reps) * 1e6);
    }
  }

  private static double copyMillis(Gpu gpu, Exec g, long bytes, int reps) {
    try (DeviceBuffer src = g.allocate(bytes); DeviceBuffer dst = g.allocate(bytes);
        CudaEvent start = new CudaEvent(gpu.device(), true); CudaEvent end = new CudaEvent(gpu.device(), true)) {
      double[] ms = new double[reps + 1];
      for (int r = 0; r <= reps; r++) {
        start.record(g.stream());
        check(JCudaDriver.cuMemcpyDtoDAsync(dst.pointer(), src.pointer(), bytes, g.stream().handle()), "cuMemcpyDtoDAsync");
        end.record(g.stream());
        end.synchronize();
        ms[r] = end.elapsedMillisSince(start);
      }
      double[] timed = Arrays.copyOfRange(ms, 1, ms.length);
      Arrays.sort(timed);
      return timed[reps / 2];
    }
  }

  static VectorSchemaRoot doubles(BufferAllocator a, String name, int rows, long seed) {
    Float8Vector v = new Float8Vector(name, a);
    v.allocateNew(rows);
    SplittableRandom r = new SplittableRandom(seed);
    long d = v.getDataBuffer().memoryAddress();
    for (int i = 0; i < rows; i++) {
      MemoryUtil.putLong(d + 8L * i, Double.doubleToRawLongBits(r.nextDouble()));
    }
    v.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    v.setValueCount(rows);
    return root(v);
  }

  private static VectorSchemaRoot mask(BufferAllocator a, int rows, long seed) {
    BitVector v = new BitVector("keep", a);
    v.allocateNew(rows);
    SplittableRandom r = new SplittableRandom(seed);
    long d = v.getDataBuffer().memoryAddress();
    for (long i = 0; i < (rows + 7) / 8; i++) {
      MemoryUtil.putByte(d + i, (byte) r.nextInt());
    }
    v.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    v.setValueCount(rows);
    return root(v);
  }

  private static VectorSchemaRoot ints(BufferAllocator a, int rows, long seed) {
    IntVector v = new IntVector("k", a);
    v.allocateNew(rows);
    SplittableRandom r = new SplittableRandom(seed);
    long d = v.getDataBuffer().memoryAddress();
    for (int i = 0; i < rows; i++) {
      MemoryUtil.putInt(d + 4L * i, r.nextInt());
    }
    v.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    v.setValueCount(rows);
    return root(v);
  }

  // the int keys and the doubles as one two-column root; shares the vectors' buffers
  private static VectorSchemaRoot twoKeys(VectorSchemaRoot keys, VectorSchemaRoot values) {
    List<FieldVector> vs = new ArrayList<>();
    for (VectorSchemaRoot r : List.of(keys, values)) {
      FieldVector v = r.getVector(0);
      FieldVector shared = v.getField().createVector(v.getAllocator());
      shared.loadFieldBuffers(new org.apache.arrow.vector.ipc.message.ArrowFieldNode(v.getValueCount(), 0), v.getFieldBuffers());
      vs.add(shared);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vs);
    root.setRowCount(keys.getRowCount());
    return root;
  }

  static VectorSchemaRoot root(FieldVector v) {
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(v));
    root.setRowCount(v.getValueCount());
    return root;
  }
}
