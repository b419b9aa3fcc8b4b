package dev.gpudf.bench;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.SampleData;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceMemoryPool;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.cuda.Pointers;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compare.VectorEqualsVisitor;

/**
 * Host<->device throughput of a 1 GiB table (int64 + float64, 64 Mi rows each) through
 * {@link DeviceTable}, from pinned and from pageable Arrow memory; the driver's own pageable copy
 * of the same bytes for reference; and the device pool's allocate/free rate. Prints one line per
 * figure and a summary table last.
 *
 * <p>{@code TransferBenchmark [reps]}; each figure is the median of {@code reps} (default 5)
 * after one warm-up.
 */
public final class TransferBenchmark {
  private static final long GIB = 1L << 30;

  public static void main(String[] args) {
    int reps = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    List<String> summary = new ArrayList<>();
    try (Gpu gpu = Gpu.open(0); CudaStream stream = gpu.newStream()) {
      System.out.printf("device: %s, compute %s, pool limit %,d MiB%n", gpu.device().name(),
          gpu.device().computeCapability(), gpu.pool().limit() >> 20);
      int rows = (int) (GIB / 16);
      try (BufferAllocator pinned = gpu.pinnedAllocator().newChildAllocator("bench", 0, Long.MAX_VALUE);
          BufferAllocator pageable = new RootAllocator()) {
        for (boolean isPinned : new boolean[] {true, false}) {
          BufferAllocator a = isPinned ? pinned : pageable;
          String kind = isPinned ? "pinned" : "pageable";
          try (VectorSchemaRoot source = SampleData.idValue(a, rows)) {
            double[] h2d = new double[reps];
            double[] d2h = new double[reps];
            for (int r = -1; r < reps; r++) {
              long t0 = System.nanoTime();
              try (DeviceTable t = DeviceTable.fromArrow(gpu, source, stream)) {
                long t1 = System.nanoTime();
                try (VectorSchemaRoot back = t.toArrow(a, stream)) {
                  long t2 = System.nanoTime();
                  if (r < 0) {
                    verify(source, back);
                    continue;
                  }
                  h2d[r] = GIB / (double) (t1 - t0);
                  d2h[r] = GIB / (double) (t2 - t1);
                  System.out.printf("table 1 GiB %-8s rep %d: host->device %.2f GB/s, device->host %.2f GB/s%n",
                      kind, r, h2d[r], d2h[r]);
                }
              }
            }
            summary.add(String.format("DeviceTable 1 GiB %-8s host->device  median %6.2f GB/s  max %6.2f", kind, median(h2d), max(h2d)));
            summary.add(String.format("DeviceTable 1 GiB %-8s device->host  median %6.2f GB/s  max %6.2f", kind, median(d2h), max(d2h)));
          }
        }
        summary.addAll(rawCopies(gpu, pinned, pageable, stream, reps));
      }
      summary.addAll(poolRate(gpu.pool(), stream));
    }
    System.out.println("== summary ==");
    summary.forEach(System.out::println);
  }

  // The bare DMA through the copier from pinned memory, and what the driver alone achieves from
  // pageable memory (its internal staging): the ceilings the table figures are measured against.
  private static List<String> rawCopies(Gpu gpu, BufferAllocator pinned, BufferAllocator pageable, CudaStream stream,
      int reps) {
    List<String> out = new ArrayList<>();
    try (ArrowBuf pin = pinned.buffer(GIB); ArrowBuf page = pageable.buffer(GIB); DeviceBuffer dev = gpu.allocate(GIB, stream)) {
      pin.setZero(0, GIB);
      page.setZero(0, GIB);
      double[] h2d = new double[reps];
      double[] d2h = new double[reps];
      double[] driver = new double[reps];
      for (int r = -1; r < reps; r++) {
        long t0 = System.nanoTime();
        gpu.copier().toDevice(pin.memoryAddress(), true, dev.address(), GIB, stream);
        stream.synchronize();
        long t1 = System.nanoTime();
        gpu.copier().toHost(dev.address(), pin.memoryAddress(), true, GIB, stream);
        stream.synchronize();
        long t2 = System.nanoTime();
        check(JCudaDriver.cuMemcpyHtoD(dev.pointer(), Pointers.host(page.memoryAddress()), GIB), "cuMemcpyHtoD");
        long t3 = System.nanoTime();
        if (r >= 0) {
          h2d[r] = GIB / (double) (t1 - t0);
          d2h[r] = GIB / (double) (t2 - t1);
          driver[r] = GIB / (double) (t3 - t2);
        }
      }
      out.add(String.format("raw copier 1 GiB pinned   host->device  median %6.2f GB/s  max %6.2f", median(h2d), max(h2d)));
      out.add(String.format("raw copier 1 GiB pinned   device->host  median %6.2f GB/s  max %6.2f", median(d2h), max(d2h)));
      out.add(String.format("driver cuMemcpyHtoD 1 GiB pageable      median %6.2f GB/s  max %6.2f", median(driver), max(driver)));
    }
    return out;
  }

  /**
   * The link's rate from pinned host memory to the device: {@code bytes} copied by the copier,
   * median of {@code reps} after one warm-up, in GB/s. What a cold scan's stored pages cross.
   */
  static double pinnedToDeviceGBps(Gpu gpu, long bytes, int reps) {
    try (BufferAllocator pinned = gpu.pinnedAllocator().newChildAllocator("link", 0, Long.MAX_VALUE);
        ArrowBuf pin = pinned.buffer(bytes); CudaStream stream = gpu.newStream();
        DeviceBuffer dev = gpu.allocate(bytes, stream)) {
      pin.setZero(0, bytes);
      double[] rate = new double[reps];
      for (int r = -1; r < reps; r++) {
        long t0 = System.nanoTime();
        gpu.copier().toDevice(pin.memoryAddress(), true, dev.address(), bytes, stream);
        stream.synchronize();
        if (r >= 0) {
          rate[r] = bytes / (double) (System.nanoTime() - t0);
        }
      }
      return median(rate);
    }
  }

  /**
   * The host's memory bandwidth as {@code threads} threads copying {@code bytes} between two
   * buffers measure it, each its own slice: bytes copied a second (each read once and written
   * once), median of {@code reps} after one warm-up, in GB/s. A cold scan copies its files' pages
   * so, from the page cache into pinned memory.
   */
  static double hostCopyGBps(long bytes, int threads, int reps) throws InterruptedException {
    long slice = bytes / threads;
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    // Arrow buffers, freed when this returns (direct ByteBuffers would hold their memory until a GC)
    try (BufferAllocator a = new RootAllocator(); ArrowBuf from = a.buffer(bytes); ArrowBuf to = a.buffer(bytes)) {
      // touched before they are timed: an untouched page reads as the shared zero page
      from.setZero(0, bytes);
      to.setZero(0, bytes);
      double[] rate = new double[reps];
      for (int r = -1; r < reps; r++) {
        List<java.util.concurrent.Callable<Object>> copies = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          long at = t * slice;
          copies.add(() -> {
            to.setBytes(at, from, at, slice);
            return null;
          });
        }
        long t0 = System.nanoTime();
        for (java.util.concurrent.Future<Object> f : pool.invokeAll(copies)) {
          f.get();
        }
        if (r >= 0) {
          rate[r] = (long) slice * threads / (double) (System.nanoTime() - t0);
        }
      }
      return median(rate);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("a host copy failed", e.getCause());
    } finally {
      pool.shutdown();
    }
  }

  private static List<String> poolRate(DeviceMemoryPool pool, CudaStream stream) {
    List<String> out = new ArrayList<>();
    int n = 200_000;
    long[] sizes = {256, 4096, 65_536, 1 << 20, 3_000_000};
    for (int warm = 0; warm < 2; warm++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        pool.allocate(sizes[i % sizes.length], stream).close();
      }
      long t1 = System.nanoTime();
      if (warm == 1) {
        out.add(String.format("pool allocate+free, one at a time    %,.0f pairs/s (%.2f us/pair)", n / ((t1 - t0) / 1e9), (t1 - t0) / 1e3 / n));
      }
    }
    int batch = 1000;
    long t0 = System.nanoTime();
    for (int round = 0; round < 100; round++) {
      List<DeviceBuffer> live = new ArrayList<>(batch);
      for (int i = 0; i < batch; i++) {
        live.add(pool.allocate(sizes[i % sizes.length], stream));
      }
      live.forEach(DeviceBuffer::close);
    }
    long t1 = System.nanoTime();
    out.add(String.format("pool allocate 1000 then free 1000    %,.0f pairs/s (%.2f us/pair)", 100.0 * batch / ((t1 - t0) / 1e9), (t1 - t0) / 1e3 / (100.0 * batch)));
    out.add("pool stats after: " + pool.stats());
    return out;
  }

  private static void verify(VectorSchemaRoot a, VectorSchemaRoot b) {
    for (FieldVector v : a.getFieldVectors()) {
      if (!VectorEqualsVisitor.vectorEquals(v, b.getVector(v.getName()))) {
        throw new IllegalStateException("round trip changed column " + v.getName());
      }
    }
  }

  private static double median(double[] x) {
    double[] s = x.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static double max(double[] x) {
    return Arrays.stream(x).max().orElse(0);
  }
}
