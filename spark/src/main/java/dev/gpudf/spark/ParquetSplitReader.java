package dev.gpudf.spark;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.ParquetDecode;
import dev.gpudf.formats.ParquetRowGroups;
import java.io.Closeable;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Function1;
import scala.collection.Iterator;

/**
 * How a {@link GpudfParquetScanExec} reads one of Spark's file splits (a byte range of a Parquet
 * file), on an executor: the row groups whose middle lies in the range (the rule Spark's own
 * reader follows, so that a file's splits read by either reader take each row group once) but those
 * whose statistics prove no row passes Spark's pushed-down filters ({@link RowGroupSkipping}), a run
 * of them at a time of at most {@code batchRows} rows (one row group where it alone has more), each
 * column's stored pages read from the file and decoded by gpudf ({@link ParquetDecode}: on the
 * device, or by its CPU twin on the CPU backend), each run one batch (on the GPU a {@link
 * DeviceBatch} the next gpudf operator takes where it is). A split this reader does not take goes
 * to Spark's own reader ({@code spark}), whole: a file not on the local file system, one whose
 * footer cannot be read, lacks a column or stores one in a way the decoder does not take, or whose
 * first row groups' page headers name such a way. Should a later run of a split turn out so, after
 * earlier ones went to the query, the task fails naming the file and row groups and the setting
 * that leaves Parquet scans to Spark ({@value GpudfParquetScanExec#ENABLED}): a second reader
 * cannot take up a split where this one stopped.
 */
final class ParquetSplitReader extends scala.runtime.AbstractFunction1<PartitionedFile, Iterator<InternalRow>>
    implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Spark's key in a Parquet footer naming the Spark version that wrote it. */
  private static final String SPARK_VERSION_KEY = "org.apache.spark.version";
  /** Spark's key in a Parquet footer saying its dates are in the hybrid Julian calendar. */
  private static final String LEGACY_DATES_KEY = "org.apache.spark.legacyDateTime";

  private final Function1<PartitionedFile, Iterator<InternalRow>> spark;
  private final org.apache.spark.sql.types.StructType schema;
  private final org.apache.spark.sql.types.StructType partitions;
  private final List<String> names;
  // gpudf's types are not serializable: made from the schema on the executor
  private transient List<DataType> types;
  private final String name;
  private final int batchRows;
  private final boolean datesAsWritten;
  private final RowGroupSkipping skipping;
  private final OpMetrics metrics;

  /**
   * Reads the columns of {@code schema} (by their names) of each split, then a table's partition
   * columns {@code partitions} (each split's values, as Spark's reader appends them), as operator {@code name} with
   * {@code metrics}, at most {@code batchRows} rows a batch; {@code spark} reads the splits it does
   * not take. {@code datesAsWritten}: the session reads the dates of a file that names no Spark
   * version as they are stored (Spark's rebase mode CORRECTED); a file whose dates Spark would
   * rebase from the hybrid calendar or check goes to Spark's reader.
   * Row groups whose statistics prove that no row passes {@code skipping} are not read.
   */
  ParquetSplitReader(Function1<PartitionedFile, Iterator<InternalRow>> spark, org.apache.spark.sql.types.StructType schema,
      org.apache.spark.sql.types.StructType partitions, String name, int batchRows, boolean datesAsWritten,
      RowGroupSkipping skipping, OpMetrics metrics) {
    this.spark = spark;
    this.partitions = partitions;
    this.skipping = skipping;
    this.schema = schema;
    List<String> n = new ArrayList<>();
    for (org.apache.spark.sql.types.StructField f : schema.fields()) {
      n.add(f.name());
    }
    this.names = List.copyOf(n);
    this.name = name;
    this.batchRows = batchRows;
    this.datesAsWritten = datesAsWritten;
    this.metrics = metrics;
  }

  @Override
  public Iterator<InternalRow> apply(PartitionedFile file) {
    if (types == null) {
      List<DataType> t = new ArrayList<>();
      for (org.apache.spark.sql.types.StructField f : schema.fields()) {
        t.add(ExprTranslator.type(f.dataType()));
      }
      types = List.copyOf(t);
    }
    ParquetRowGroups groups = open(file);
    if (groups == null) {
      return toSpark(file, "its footer names a column, a type or a storage gpudf's reader does not take");
    }
    Split split = new Split(file, groups);
    try {
      if (!split.first()) {
        split.close();
        return toSpark(file, "its first row groups hold pages gpudf's decoder does not take");
      }
    } catch (RuntimeException e) {
      split.close();
      throw e;
    }
    org.apache.spark.TaskContext task = org.apache.spark.TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> split.close());
    }
    @SuppressWarnings("unchecked")
    Iterator<InternalRow> rows = (Iterator<InternalRow>) (Iterator<?>) split;
    return rows;
  }

  private Iterator<InternalRow> toSpark(PartitionedFile file, String why) {
    LOG.warn("{} of {} goes to Spark's Parquet reader: {}", file, name, why);
    GpudfBackend.get().splitLeftToSpark();
    return spark.apply(file);
  }

  /** The file's row groups, or null when this reader does not take it (Spark's reader then reads it, or says what is wrong). */
  private ParquetRowGroups open(PartitionedFile file) {
    java.net.URI uri = file.pathUri();
    if (uri.getScheme() != null && !uri.getScheme().equals("file")) {
      return null;
    }
    // the decoded path: Spark's URIs may hold characters past ASCII as they are (a partition
    // directory q=é1), which a file system's URI reader refuses
    if (uri.getAuthority() != null && !uri.getAuthority().isEmpty() || uri.getPath() == null) {
      return null;
    }
    Path path;
    try {
      path = Path.of(uri.getPath());
    } catch (java.nio.file.InvalidPathException e) {
      return null;
    }
    ParquetRowGroups groups = ParquetRowGroups.open(path, names, types);
    // a file that changed since Spark listed it is Spark's reader's to report
    if (groups == null || groups.fileSize() != file.fileSize() || (types.stream().anyMatch(t -> t.id() == TypeId.DATE)
        && !datesAsStored(groups))) {
      return null;
    }
    return groups;
  }

  /**
   * Whether Spark reads the file's dates as stored (the proleptic Gregorian calendar, gpudf's), as
   * Spark decides it: by the Spark version that wrote the file where the footer names one (3 or
   * later, without the hybrid-calendar key), else by the session's rebase mode.
   */
  private boolean datesAsStored(ParquetRowGroups groups) {
    String version = groups.keyValue(SPARK_VERSION_KEY);
    if (version == null) {
      return datesAsWritten;
    }
    int major;
    try {
      major = Integer.parseInt(version.split("\\.", 2)[0].trim());
    } catch (NumberFormatException e) {
      return false;
    }
    return major >= 3 && groups.keyValue(LEGACY_DATES_KEY) == null;
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ParquetSplitReader.class);

  /**
   * One split's batches, one a run of row groups; each batch valid until the next is asked for
   * (Spark's contract), the last until the split ends or the task completes. Closing frees the
   * batch out and the split's context.
   */
  private final class Split extends scala.collection.AbstractIterator<Object> implements Closeable {
    private final PartitionedFile file;
    private final ParquetRowGroups groups;
    private final List<int[]> runs = new ArrayList<>();
    private final Exec exec;
    private int next;
    // the run read ahead by first(), not yet handed out
    private List<ParquetDecode.Chunk> pending;
    private AutoCloseable current;
    private boolean closed;

    Split(PartitionedFile file, ParquetRowGroups groups) {
      this.file = file;
      this.groups = groups;
      List<Integer> mine = new ArrayList<>();
      for (int g : groups.inRange(file.start(), file.length())) {
        if (skipping.mayMatch(c -> groups.range(g, c))) {
          mine.add(g);
        } else {
          GpudfBackend.get().rowGroupSkipped();
        }
      }
      int i = 0;
      // runs of consecutive row groups, each at most batchRows rows or one group
      while (i < mine.size()) {
        int first = mine.get(i);
        long rows = groups.rows(first);
        int end = first + 1;
        i++;
        while (i < mine.size() && mine.get(i) == end && rows + groups.rows(end) <= batchRows) {
          rows += groups.rows(end);
          end++;
          i++;
        }
        runs.add(new int[] {first, end});
      }
      this.exec = GpudfExec.taskExec(name);
    }

    /** Reads the first run's pages; false when the decoder does not take them (nothing is handed out then). */
    boolean first() {
      if (runs.isEmpty()) {
        return true;
      }
      pending = read(runs.get(0));
      return pending != null;
    }

    /** Run {@code run}'s columns as stored pages, or null when one is in pages the decoder does not take. */
    private List<ParquetDecode.Chunk> read(int[] run) {
      long t0 = System.nanoTime();
      List<ParquetDecode.Chunk> chunks = new ArrayList<>();
      try {
        for (int c = 0; c < names.size(); c++) {
          ParquetDecode.Chunk chunk = groups.readEncoded(run[0], run[1], c, exec.allocator());
          if (chunk == null) {
            // (the columns read so far are closed below)
            return null;
          }
          chunks.add(chunk);
        }
        List<ParquetDecode.Chunk> out = chunks;
        chunks = List.of();
        return out;
      } finally {
        chunks.forEach(ParquetDecode.Chunk::close);
        metrics.spent(OpMetrics.Phase.FROM_SPARK, t0);
      }
    }

    @Override
    public boolean hasNext() {
      if (closed) {
        return false;
      }
      if (next >= runs.size()) {
        close();
        return false;
      }
      return true;
    }

    @Override
    public Object next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      release();
      int[] run = runs.get(next);
      List<ParquetDecode.Chunk> chunks = pending != null ? pending : read(run);
      pending = null;
      if (chunks == null) {
        throw new UserException(file.filePath() + " row groups " + run[0] + " .. " + (run[1] - 1)
            + " hold pages gpudf's decoder does not take, found after the split's earlier row groups were read;"
            + " set " + GpudfParquetScanExec.ENABLED + "=false to leave Parquet scans to Spark");
      }
      next++;
      int rows = 0;
      for (int g = run[0]; g < run[1]; g++) {
        rows += groups.rows(g);
      }
      try {
        return decode(chunks, rows, file.partitionValues());
      } finally {
        chunks.forEach(ParquetDecode.Chunk::close);
      }
    }

    /**
     * {@code chunks}, {@code rows} rows, decoded into the next batch on the task's backend; on the
     * GPU, by the decoder's CPU twin where the device has no memory for them (with a log line).
     */
    private ColumnarBatch decode(List<ParquetDecode.Chunk> chunks, int rows, InternalRow partitionValues) {
      long t0 = System.nanoTime();
      metrics.ranOn();
      try {
        if (exec.hasGpu()) {
          try {
            return onDevice(chunks, rows, partitionValues);
          } catch (dev.gpudf.columnar.error.GpuOutOfMemoryException e) {
            LOG.warn("{} rows of {} are decoded on the CPU: {}", rows, file, e.getMessage());
            GpudfBackend.get().ranOnHost();
          }
        }
        return onHost(chunks, rows, partitionValues);
      } finally {
        metrics.spent(OpMetrics.Phase.OPERATION, t0);
      }
    }

    private ColumnarBatch onDevice(List<ParquetDecode.Chunk> chunks, int rows, InternalRow partitionValues) {
      DeviceTable table = GpudfBackend.get().inTurn(() -> {
        List<DeviceColumn> columns = ParquetDecode.decode(exec, chunks);
        DeviceTable decoded;
        try {
          decoded = new DeviceTable(exec.gpu(), columnNames(chunks.size()), columns, rows);
        } catch (RuntimeException e) {
          columns.forEach(DeviceColumn::close);
          throw e;
        }
        try (decoded) {
          return (DeviceTable) withPartitionValues(decoded, partitionValues, exec);
        }
      });
      metrics.copiedToDevice(chunks.stream().mapToLong(ParquetDecode.Chunk::storedBytes).sum());
      try {
        exec.stream().synchronize();
        DeviceBatch out = new DeviceBatch(table, exec, metrics);
        current = out;
        return out.batch();
      } catch (RuntimeException e) {
        table.close();
        throw e;
      }
    }

    private ColumnarBatch onHost(List<ParquetDecode.Chunk> chunks, int rows, InternalRow partitionValues) {
      List<FieldVector> vectors = new ArrayList<>();
      try {
        for (int c = 0; c < chunks.size(); c++) {
          vectors.add(ParquetDecode.decodeOnHost(chunks.get(c), "c" + c, exec.allocator()));
        }
      } catch (RuntimeException e) {
        vectors.forEach(FieldVector::close);
        throw e;
      }
      try (VectorSchemaRoot root = new VectorSchemaRoot(vectors)) {
        root.setRowCount(rows);
        try (HostTable decoded = HostTable.fromArrow(root); Exec cpu = exec.hasGpu() ? Exec.onCpu(exec.allocator()) : null;
            HostTable table = (HostTable) withPartitionValues(decoded, partitionValues, cpu != null ? cpu : exec)) {
          SparkArrow.Output out = SparkArrow.toSpark(table, exec.allocator());
          current = out;
          return out.batch();
        }
      }
    }

    private static List<String> columnNames(int n) {
      List<String> out = new ArrayList<>();
      for (int c = 0; c < n; c++) {
        out.add("c" + c);
      }
      return out;
    }

    /**
     * {@code decoded}'s columns, then one column a partition column holding this split's value in
     * every row, on {@code on}'s backend; a new table the caller closes ({@code decoded} itself,
     * retained, for a table with no partition columns).
     */
    private dev.gpudf.columnar.Table<?> withPartitionValues(dev.gpudf.columnar.Table<?> decoded, InternalRow values, Exec on) {
      if (partitions.isEmpty()) {
        decoded.retain();
        return decoded;
      }
      List<dev.gpudf.columnar.Column> columns = new ArrayList<>();
      try {
        for (int c = 0; c < decoded.columnCount(); c++) {
          dev.gpudf.columnar.Column shared = decoded.column(c);
          shared.retain();
          columns.add(shared);
        }
        org.apache.spark.sql.types.StructField[] fields = partitions.fields();
        for (int p = 0; p < fields.length; p++) {
          org.apache.spark.sql.types.DataType t = fields[p].dataType();
          org.apache.spark.sql.catalyst.expressions.Literal value = new org.apache.spark.sql.catalyst.expressions.Literal(
              values.isNullAt(p) ? null : values.get(p, t), t);
          columns.add(dev.gpudf.kernels.TableOps.evaluate(on, decoded, ExprTranslator.translate(value, List.of())));
        }
      } catch (RuntimeException e) {
        columns.forEach(dev.gpudf.columnar.Column::close);
        throw e;
      }
      return dev.gpudf.kernels.TableOps.table(on, decoded, columnNames(columns.size()), columns, decoded.rowCount());
    }

    private void release() {
      AutoCloseable c = current;
      current = null;
      GpudfExec.closeBatch(c);
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        try {
          release();
          if (pending != null) {
            pending.forEach(ParquetDecode.Chunk::close);
            pending = null;
          }
        } finally {
          try (org.apache.arrow.memory.BufferAllocator a = exec.allocator(); Exec e = exec) {
            // the context, then its allocator, which checks that nothing was left behind
          }
        }
      }
    }
  }
}
