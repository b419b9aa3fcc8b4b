package dev.gpudf.spark;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.TableOps;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A gpudf operator in a Spark plan: it produces columnar batches of Arrow columns ({@link
 * SparkArrow}), and row-based parents read it through the transition Spark puts above it. Its
 * product elements are its constructor's arguments, in order (its expressions, then its
 * children), so that Spark can copy it with new expressions or children.
 */
abstract class GpudfExec extends SparkPlan {
  static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GpudfExec.class);
  /** What the operator does to one batch, on an executor; serializable, as Spark ships it there. */
  interface Operation extends Serializable {
    /** The result of {@code table} (which the caller closes), on its backend, a table the caller closes too. */
    Table<?> apply(Exec exec, Table<?> table);
  }

  /** The constructor's arguments before the children: the operator's expressions. */
  abstract Object[] arguments();

  private transient OpMetrics opMetrics;

  /** This operator's metrics, made once, on the driver (its tasks get them with their closures). */
  synchronized OpMetrics opMetrics() {
    if (opMetrics == null) {
      opMetrics = OpMetrics.create(sparkContext());
    }
    return opMetrics;
  }

  @Override
  public scala.collection.immutable.Map<String, org.apache.spark.sql.execution.metric.SQLMetric> metrics() {
    return metricsMap(opMetrics(), java.util.Map.of());
  }

  /** {@code m} by name, then {@code more}: a plan node's {@link SparkPlan#metrics}. */
  static scala.collection.immutable.Map<String, org.apache.spark.sql.execution.metric.SQLMetric> metricsMap(OpMetrics m,
      java.util.Map<String, org.apache.spark.sql.execution.metric.SQLMetric> more) {
    java.util.Map<String, org.apache.spark.sql.execution.metric.SQLMetric> all = new java.util.LinkedHashMap<>();
    org.apache.spark.sql.execution.metric.SQLMetric[] each = m.all();
    for (int i = 0; i < each.length; i++) {
      all.put(OpMetrics.NAMES[i], each[i]);
    }
    all.putAll(more);
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(all));
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    throw new IllegalStateException(nodeName() + " produces columnar batches only");
  }

  @Override
  public int productArity() {
    return arguments().length + children().size();
  }

  @Override
  public Object productElement(int n) {
    Object[] args = arguments();
    if (n < 0 || n >= productArity()) {
      throw new IndexOutOfBoundsException(n);
    }
    return n < args.length ? args[n] : children().apply(n - args.length);
  }

  @Override
  public boolean canEqual(Object other) {
    return other != null && other.getClass() == getClass();
  }

  /** Equal product elements (its expressions and children): how Spark's case classes compare, which plan reuse relies on. */
  @Override
  public boolean equals(Object other) {
    if (this == other) {
      return true;
    }
    if (!canEqual(other)) {
      return false;
    }
    GpudfExec o = (GpudfExec) other;
    for (int i = 0; i < productArity(); i++) {
      if (!Objects.equals(productElement(i), o.productElement(i))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    int h = getClass().hashCode();
    for (int i = 0; i < productArity(); i++) {
      h = 31 * h + Objects.hashCode(productElement(i));
    }
    return h;
  }

  /** A table of {@code exprs} over {@code table}, on its backend, which the caller closes: a bare column shared, any other computed. */
  static Table<?> evaluate(Exec exec, Table<?> table, List<Expr> exprs) {
    List<Column> columns = new ArrayList<>();
    List<String> names = new ArrayList<>();
    try {
      for (Expr e : exprs) {
        if (e instanceof Expr.Col c) {
          Column shared = table.column(c.index());
          shared.retain();
          columns.add(shared);
        } else {
          columns.add(TableOps.evaluate(exec, table, e));
        }
        names.add("c" + names.size());
      }
    } catch (RuntimeException ex) {
      columns.forEach(Column::close);
      throw ex;
    }
    return TableOps.table(exec, table, names, columns, table.rowCount());
  }

  /**
   * {@code t} on the task's backend: itself (retained) on the CPU, a copy on the GPU; the caller
   * keeps {@code t} and closes the result.
   */
  static Table<?> onBackend(Exec exec, HostTable t, OpMetrics metrics) {
    if (exec.hasGpu()) {
      metrics.copiedToDevice(bytes(t));
      return DeviceTable.fromHost(exec.gpu(), t, exec.stream());
    }
    t.retain();
    return t;
  }

  /** {@code t} on the host: itself (retained), or a copy of a device table; the caller keeps {@code t} and closes the result. */
  static HostTable onHost(Exec exec, Table<?> t, OpMetrics metrics) {
    if (t instanceof DeviceTable d) {
      // on the task's stream, after the kernels that made the table
      HostTable h = d.toHost(exec.allocator(), exec.stream());
      metrics.copiedToHost(bytes(h));
      return h;
    }
    t.retain();
    return (HostTable) t;
  }

  /** The bytes of {@code t}'s Arrow buffers. */
  static long bytes(HostTable t) {
    long n = 0;
    for (int i = 0; i < t.columnCount(); i++) {
      n += t.column(i).vector().getBufferSize();
    }
    return n;
  }

  /** The attributes {@code exprs} make: an operator's output from its output expressions. */
  static scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute> attributes(
      scala.collection.Seq<? extends org.apache.spark.sql.catalyst.expressions.NamedExpression> exprs) {
    List<org.apache.spark.sql.catalyst.expressions.Attribute> out = new ArrayList<>();
    for (org.apache.spark.sql.catalyst.expressions.NamedExpression e : CollectionConverters.asJava(exprs)) {
      out.add(e.toAttribute());
    }
    return seq(out);
  }

  static <T> scala.collection.immutable.Seq<T> seq(List<T> items) {
    return CollectionConverters.asScala(items).toList();
  }

  static <T> List<T> list(scala.collection.Seq<T> items) {
    return new ArrayList<>(CollectionConverters.asJava(items));
  }

  /**
   * One input of an operation: gpudf tables to run on as one, in order (several when Spark's small
   * batches are gathered); each a host table from Spark's batches, or a device table another gpudf
   * operator left on the device. Closing closes them all.
   */
  record Parts(List<Table<?>> tables) implements AutoCloseable {
    long rows() {
      return tables.stream().mapToLong(Table::rowCount).sum();
    }

    /**
     * The parts as one table on {@code exec}'s backend, which the caller closes (the parts stay
     * open): on the GPU, host parts gathered on the host and copied up, device parts used as they
     * are; on the CPU, device parts (none, unless the device had no memory) copied down.
     */
    Table<?> on(Exec exec, OpMetrics metrics) {
      List<Table<?>> placed = new ArrayList<>();
      List<Table<?>> run = new ArrayList<>();
      try {
        for (Table<?> t : tables) {
          if (t instanceof HostTable) {
            if (exec.hasGpu()) {
              run.add(t);
            } else {
              t.retain();
              placed.add(t);
            }
          } else if (exec.hasGpu()) {
            upload(exec, run, placed, metrics);
            t.retain();
            placed.add(t);
          } else {
            // the CPU twin, where the device had no memory: another operator's finished result, copied down
            HostTable h = ((DeviceTable) t).toHost(exec.allocator());
            placed.add(h);
            metrics.copiedToHost(bytes(h));
          }
        }
        upload(exec, run, placed, metrics);
        return one(exec, placed);
      } finally {
        placed.forEach(Table::close);
      }
    }

    /** Each run of host parts gathered on the host and copied up as one table, added to {@code placed}; {@code run} emptied. */
    private static void upload(Exec exec, List<Table<?>> run, List<Table<?>> placed, OpMetrics metrics) {
      if (!run.isEmpty()) {
        try (HostTable h = (HostTable) one(exec, run)) {
          run.clear();
          placed.add(onBackend(exec, h, metrics));
        }
      }
    }

    /** {@code parts} as one table of their backend, which the caller closes (the parts stay open). */
    private static Table<?> one(Exec exec, List<Table<?>> parts) {
      if (parts.size() == 1) {
        parts.get(0).retain();
        return parts.get(0);
      }
      List<String> names = new ArrayList<>();
      for (int i = 0; i < parts.get(0).columnCount(); i++) {
        names.add("c" + i);
      }
      return TableOps.concat(exec, parts, names);
    }

    @Override
    public void close() {
      tables.forEach(Table::close);
    }
  }

  /**
   * One task's stream of results: input batches become gpudf tables, at least {@code batchRows}
   * rows an operation where the input has them (Spark's readers give 4,096 rows a batch, and an
   * operation's fixed cost, a device round trip on the GPU, is paid once a table); another gpudf
   * operator's device batches are used where they are. Each table's result goes out as the next
   * batch, left on the device on the GPU ({@link DeviceBatch}), valid until the one after is asked
   * for (Spark's contract), so each output is closed when the next is made, the last when the input
   * ends or the task completes (a parent that stops early, such as a LIMIT, does not drain it); then
   * {@code held} (what the operation keeps for the whole task), then the task's allocator.
   */
  static final class BatchIterator extends TaskBatches {
    private final java.util.Iterator<Parts> input;
    private final Operation op;
    private final BufferAllocator allocator;
    private final Exec exec;
    private final AutoCloseable held;
    private final boolean hostTwin;
    private final OpMetrics metrics;

    BatchIterator(java.util.Iterator<ColumnarBatch> input, StructType schema, Operation op, Exec exec, AutoCloseable held,
        int batchRows, boolean hostTwin, OpMetrics metrics) {
      this(new java.util.Iterator<Parts>() {
        @Override
        public boolean hasNext() {
          return input.hasNext();
        }

        @Override
        public Parts next() {
          List<Table<?>> parts = new ArrayList<>();
          try {
            long rows = 0;
            do {
              ColumnarBatch b = input.next();
              long t0 = System.nanoTime();
              DeviceTable d = DeviceBatch.taken(b, exec);
              if (d != null) {
                GpudfBackend.get().keptOnDevice();
              }
              Table<?> t = d != null ? d : SparkArrow.toGpudf(b, schema, exec.allocator());
              metrics.spent(OpMetrics.Phase.FROM_SPARK, t0);
              parts.add(t);
              rows += t.rowCount();
            } while (rows < batchRows && input.hasNext());
            Parts p = new Parts(parts);
            parts = List.of();
            return p;
          } finally {
            parts.forEach(Table::close);
          }
        }
      }, op, exec, held, hostTwin, metrics);
    }

    /**
     * Results of {@code op} over the inputs {@code input} gives (each closed once its result is
     * made); {@code hostTwin}: {@code op} also runs on host tables (it holds nothing on the device),
     * so that a batch the device has no memory for runs on the CPU instead of failing the task.
     */
    BatchIterator(java.util.Iterator<Parts> input, Operation op, Exec exec, AutoCloseable held, boolean hostTwin,
        OpMetrics metrics) {
      this.hostTwin = hostTwin;
      this.metrics = metrics;
      this.input = input;
      this.op = op;
      this.exec = exec;
      this.allocator = exec.allocator();
      this.held = held;
    }

    @Override
    boolean more() {
      return input.hasNext();
    }

    @Override
    HeldBatch make() {
      // the device section (up, the operation) in one of the backend's turns
      try (Parts in = input.next(); Table<?> result = GpudfBackend.get().inTurn(() -> compute(in))) {
        if (result instanceof DeviceTable d) {
          d.retain();
          DeviceBatch out;
          try {
            out = new DeviceBatch(d, exec, metrics);
          } catch (RuntimeException e) {
            d.close();
            throw e;
          }
          return out;
        }
        return SparkArrow.toSpark((HostTable) result, allocator);
      }
    }

    /** {@code op} over {@code in} on the task's backend, or on the CPU where the device has no memory for it and {@code op} can. */
    private Table<?> compute(Parts in) {
      long t0 = System.nanoTime();
      metrics.ranOn();
      try {
        return computeOn(exec, in);
      } catch (dev.gpudf.columnar.error.GpuOutOfMemoryException e) {
        if (!exec.hasGpu() || !hostTwin) {
          throw e;
        }
        LOG.warn("a batch of {} rows runs on the CPU: {}", in.rows(), e.getMessage());
        GpudfBackend.get().ranOnHost();
        try (Exec cpu = Exec.onCpu(allocator)) {
          return computeOn(cpu, in);
        }
      } finally {
        metrics.spent(OpMetrics.Phase.OPERATION, t0);
      }
    }

    /**
     * {@code op} over {@code in} on {@code e}'s backend; on the GPU, the stream's work done before
     * it returns, so that the result can be read on any stream and {@code in}'s tables, which the
     * kernels read, can be let go.
     */
    private Table<?> computeOn(Exec e, Parts in) {
      try (Table<?> on = in.on(e, metrics)) {
        Table<?> result = op.apply(e, on);
        if (e.hasGpu()) {
          try {
            e.stream().synchronize();
          } catch (RuntimeException ex) {
            result.close();
            throw ex;
          }
        }
        return result;
      }
    }

    @Override
    void closeTask() {
      try (BufferAllocator a = allocator; Exec e = exec; AutoCloseable h = held) {
        // closed in reverse: what the operation held, the context, then the allocator, which checks for leaks
      } catch (Exception ex) {
        throw new IllegalStateException("closing a gpudf task's operator: " + ex.getMessage(), ex);
      }
    }
  }

  /** A batch handed to Spark and what holds its columns, which closing frees. */
  interface HeldBatch extends AutoCloseable {
    ColumnarBatch batch();
  }

  /**
   * A task's output batches, each valid until the next is asked for (Spark's contract): the one
   * handed out is closed then, the last when the input ends or the task completes (a parent that
   * stops early, such as a LIMIT, does not drain it), and then what the task holds.
   */
  abstract static class TaskBatches implements java.util.Iterator<ColumnarBatch>, AutoCloseable {
    private HeldBatch current;
    private boolean closed;

    /** Whether the input has more. */
    abstract boolean more();

    /** The next batch, made from the input. */
    abstract HeldBatch make();

    /** Frees what the task holds, after its last batch. */
    abstract void closeTask();

    @Override
    public final boolean hasNext() {
      if (closed) {
        return false;
      }
      if (!more()) {
        close();
        return false;
      }
      return true;
    }

    @Override
    public final ColumnarBatch next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      HeldBatch c = current;
      current = null;
      closeBatch(c);
      current = make();
      return current.batch();
    }

    @Override
    public final void close() {
      if (!closed) {
        closed = true;
        HeldBatch c = current;
        current = null;
        try {
          closeBatch(c);
        } finally {
          closeTask();
        }
      }
    }
  }

  /** Closes {@code batch}, a batch handed out earlier (or nothing, for null). */
  static void closeBatch(AutoCloseable batch) {
    if (batch != null) {
      try {
        batch.close();
      } catch (Exception e) {
        throw new IllegalStateException("closing a gpudf batch: " + e.getMessage(), e);
      }
    }
  }

  /** Every batch of {@code batches} as one table (an empty one of {@code schema} when there are none); the caller closes it. */
  static HostTable gather(java.util.Iterator<ColumnarBatch> batches, StructType schema, Exec exec, OpMetrics metrics) {
    List<HostTable> parts = new ArrayList<>();
    try {
      while (batches.hasNext()) {
        ColumnarBatch b = batches.next();
        long t0 = System.nanoTime();
        DeviceTable d = DeviceBatch.taken(b, exec);
        if (d == null) {
          parts.add(SparkArrow.toGpudf(b, schema, exec.allocator()));
        } else {
          try (d) {
            parts.add(onHost(exec, d, metrics));
          }
        }
        metrics.spent(OpMetrics.Phase.FROM_SPARK, t0);
      }
      if (parts.isEmpty()) {
        return SparkArrow.empty(schema, exec.allocator());
      }
      return parts.size() == 1 ? parts.remove(0) : dev.gpudf.kernels.Concat.concat(exec, parts.toArray(new HostTable[0]));
    } finally {
      parts.forEach(HostTable::close);
    }
  }

  /** Spark configuration: the rows an operator gathers from its input's batches before it runs ({@value #BATCH_ROWS_DEFAULT} by default). */
  static final String BATCH_ROWS = "spark.gpudf.batchRows";
  static final int BATCH_ROWS_DEFAULT = 1 << 20;

  /** {@link #BATCH_ROWS} as the session sets it; read on the driver, as the plan is made to run. */
  static int batchRows() {
    String v = org.apache.spark.sql.internal.SQLConf.get().getConfString(BATCH_ROWS, String.valueOf(BATCH_ROWS_DEFAULT));
    int rows;
    try {
      rows = Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new dev.gpudf.columnar.error.UserException(BATCH_ROWS + "=" + v + " is not a number of rows", e);
    }
    if (rows < 1) {
      throw new dev.gpudf.columnar.error.UserException(BATCH_ROWS + "=" + v + " must be at least 1");
    }
    return rows;
  }

  /**
   * A task's allocator and execution context, on the executor's backend (a stream of its own on
   * the GPU); the allocator is the task's to close (through {@link BatchIterator}).
   */
  static Exec taskExec(String name) {
    return GpudfBackend.get().taskExec(name + " task " + org.apache.spark.TaskContext.get().taskAttemptId());
  }
}
