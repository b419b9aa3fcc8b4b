package dev.gpudf.bench;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.sql.files.ParquetSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Where a cold scan of a Parquet file goes (issue 21): for sets of columns of one file, the time
 * of Arrow Dataset's reader alone (decoding, batches dropped), of gpudf's {@link ParquetSource}
 * (decoding, checking, gathering each chunk into one batch), and of that plus the upload to the
 * device (what a GPU catalog does on a cold scan); with DuckDB reading the same columns of the
 * same file in the same run as the peer. Each figure is the median of {@code reps} after one
 * untimed run (the file is in the page cache), as bytes of Parquet (the columns' compressed
 * chunks, as stored) and rows per second.
 *
 * <pre>ScanBenchmark FILE [reps] [cols,cols;cols,...] [chunkRows] [gpu|cpu]</pre>
 */
public final class ScanBenchmark {
  private ScanBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    String sets = args.length > 2 ? args[2]
        : "l_extendedprice,l_discount,l_shipdate,l_quantity;l_returnflag,l_linestatus,l_quantity,l_extendedprice,"
            + "l_discount,l_tax,l_shipdate;l_orderkey";
    int chunkRows = args.length > 3 ? Integer.parseInt(args[3]) : 1 << 24;
    boolean gpu = args.length <= 4 || args[4].equals("gpu");
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no file " + file);
    }
    System.out.printf(Locale.ROOT, "# %s: %,d bytes, chunks of %,d rows, %d cores, median of %d%n", file, Files.size(file),
        chunkRows, Runtime.getRuntime().availableProcessors(), reps);
    System.out.println("| columns | stored MB | rows | stage | ms | GB/s of Parquet | M rows/s |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- |");
    try (BufferAllocator allocator = new RootAllocator(); Gpu device = gpu ? Gpu.open(0) : null;
        Connection duck = DriverManager.getConnection("jdbc:duckdb:");
        ParquetSource source = ParquetSource.open(file, allocator, chunkRows)) {
      long rows = source.chunkRows().stream().mapToLong(Integer::longValue).sum();
      for (String set : sets.split(";")) {
        String[] names = set.split(",");
        int[] columns = Arrays.stream(names).mapToInt(n -> index(source, n)).toArray();
        long stored = Arrays.stream(columns).mapToLong(source::storedBytes).sum();
        String label = names.length + " (" + names[0] + (names.length > 1 ? ", ..." : "") + ")";
        List<String[]> stages = new ArrayList<>();
        stages.add(new String[] {"Arrow Dataset reader", "raw"});
        stages.add(new String[] {"ParquetSource chunks", "source"});
        if (gpu) {
          stages.add(new String[] {"ParquetSource into pinned memory", "pinned"});
          stages.add(new String[] {"ParquetSource into pinned memory + upload (as the GPU catalog reads)", "device"});
        }
        stages.add(new String[] {"DuckDB (sum of a hash of each value)", "duckdb"});
        for (String[] stage : stages) {
          double[] ms = new double[reps];
          for (int r = -1; r < reps; r++) {
            long t0 = System.nanoTime();
            switch (stage[1]) {
              case "raw" -> raw(file, allocator, names);
              case "source" -> chunks(source, columns, allocator, null);
              case "pinned" -> chunks(source, columns, device.pinnedAllocator(), null);
              case "device" -> chunks(source, columns, device.pinnedAllocator(), device);
              default -> duckdb(duck, file, names);
            }
            if (r >= 0) {
              ms[r] = (System.nanoTime() - t0) / 1e6;
            }
          }
          Arrays.sort(ms);
          double m = ms[reps / 2];
          System.out.printf(Locale.ROOT, "| %s | %,.1f | %,d | %s | %.1f | %.2f | %.1f |%n", label, stored / 1e6, rows, stage[0], m,
              stored / m / 1e6, rows / m / 1e3);
        }
      }
    }
  }

  private static int index(ParquetSource source, String name) {
    int i = source.names().indexOf(name);
    if (i < 0) {
      throw new IllegalArgumentException("no column " + name + " in " + source.names());
    }
    return i;
  }

  /** Arrow Dataset's reader over {@code names}: every batch decoded, then dropped. */
  private static void raw(Path file, BufferAllocator allocator, String[] names) throws Exception {
    try (FileSystemDatasetFactory factory = new FileSystemDatasetFactory(allocator, NativeMemoryPool.getDefault(),
        FileFormat.PARQUET, file.toAbsolutePath().toUri().toString()); Dataset d = factory.finish();
        Scanner s = d.newScan(new ScanOptions.Builder(1 << 17).columns(Optional.of(names)).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        r.getVectorSchemaRoot().getRowCount();
      }
    }
  }

  /** Every chunk of {@code columns} as gpudf reads it, uploaded to {@code gpu} unless null. */
  private static void chunks(ParquetSource source, int[] columns, BufferAllocator allocator, Gpu gpu) {
    for (int c = 0; c < source.chunkRows().size(); c++) {
      try (VectorSchemaRoot root = source.read(c, columns, allocator)) {
        if (gpu != null) {
          try (CudaStream stream = gpu.newStream(); DeviceTable t = DeviceTable.fromArrow(gpu, root, stream)) {
            stream.synchronize();
          }
        }
      }
    }
  }

  private static void duckdb(Connection duck, Path file, String[] names) throws Exception {
    // a hash of every value: MIN or COUNT would be answered from the footer's statistics
    String sums = String.join(", ", Arrays.stream(names).map(n -> "SUM(hash(" + n + "))").toList());
    try (Statement st = duck.createStatement();
        ResultSet rs = st.executeQuery("SELECT " + sums + " FROM read_parquet('" + file.toString().replace("'", "''") + "')")) {
      rs.next();
    }
  }
}
