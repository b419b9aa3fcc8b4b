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
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GpudfExec.class);
  /** What the operator does to one batch, on an executor; serializable, as Spark ships it there. */
  interface Operation extends Serializable {
    /** The result of {@code table} (which the caller closes), on its backend, a table the caller closes too. */
    Table<?> apply(Exec exec, Table<?> table);
  }

  /** The constructor's arguments before the children: the operator's expressions. */
  abstract Object[] arguments();

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
  static Table<?> onBackend(Exec exec, HostTable t) {
    if (exec.hasGpu()) {
      GpudfBackend.get().copiedToDevice(bytes(t));
      return DeviceTable.fromHost(exec.gpu(), t, exec.stream());
    }
    t.retain();
    return t;
  }

  /** {@code t} on the host: itself (retained), or a copy of a device table; the caller keeps {@code t} and closes the result. */
  static HostTable onHost(Exec exec, Table<?> t) {
    if (t instanceof DeviceTable d) {
      // on the task's stream, after the kernels that made the table
      HostTable h = d.toHost(exec.allocator(), exec.stream());
      GpudfBackend.get().copiedToHost(bytes(h));
      return h;
    }
    t.retain();
    return (HostTable) t;
  }

  /** The bytes of {@code t}'s Arrow buffers. */
  private static long bytes(HostTable t) {
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
   * One task's stream of results: input batches become Arrow tables, then gpudf tables of at least
   * {@code batchRows} rows each where the input has them (Spark's readers give 4,096 rows a batch,
   * and an operation's fixed cost, a device round trip on the GPU, is paid once a table), and each
   * table's result goes out as the next batch, valid until the one after is asked for (Spark's
   * contract), so each output is closed when the next is made, the last when the input ends or the
   * task completes (a parent that stops early, such as a LIMIT, does not drain it); then {@code
   * held} (what the operation keeps for the whole task), then the task's allocator.
   */
  static final class BatchIterator implements java.util.Iterator<ColumnarBatch>, AutoCloseable {
    private final java.util.Iterator<HostTable> input;
    private final Operation op;
    private final BufferAllocator allocator;
    private final Exec exec;
    private final AutoCloseable held;
    private final boolean hostTwin;
    private SparkArrow.Output current;
    private boolean closed;

    BatchIterator(java.util.Iterator<ColumnarBatch> input, StructType schema, Operation op, Exec exec, AutoCloseable held,
        int batchRows, boolean hostTwin) {
      this(new java.util.Iterator<HostTable>() {
        @Override
        public boolean hasNext() {
          return input.hasNext();
        }

        @Override
        public HostTable next() {
          List<HostTable> parts = new ArrayList<>();
          try {
            long rows = 0;
            do {
              HostTable t = SparkArrow.toGpudf(input.next(), schema, exec.allocator());
              parts.add(t);
              rows += t.rowCount();
            } while (rows < batchRows && input.hasNext());
            return parts.size() == 1 ? parts.remove(0) : dev.gpudf.kernels.Concat.concat(exec, parts.toArray(new HostTable[0]));
          } finally {
            parts.forEach(HostTable::close);
          }
        }
      }, op, exec, held, hostTwin);
    }

    /**
     * Results of {@code op} over gpudf tables {@code input} gives (each closed once its result is
     * made); {@code hostTwin}: {@code op} also runs on host tables (it holds nothing on the device),
     * so that a batch the device has no memory for runs on the CPU instead of failing the task.
     */
    BatchIterator(java.util.Iterator<HostTable> input, Operation op, Exec exec, AutoCloseable held, boolean hostTwin) {
      this.hostTwin = hostTwin;
      this.input = input;
      this.op = op;
      this.exec = exec;
      this.allocator = exec.allocator();
      this.held = held;
    }

    @Override
    public boolean hasNext() {
      if (closed) {
        return false;
      }
      if (!input.hasNext()) {
        close();
        return false;
      }
      return true;
    }

    @Override
    public ColumnarBatch next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      releaseCurrent();
      // the device section (up, the operation, down) in one of the backend's turns
      try (HostTable in = input.next(); HostTable host = GpudfBackend.get().inTurn(() -> compute(in))) {
        current = SparkArrow.toSpark(host, allocator);
      }
      return current.batch();
    }

    /** {@code op} over {@code in} on the task's backend, or on the CPU where the device has no memory for it and {@code op} can. */
    private HostTable compute(HostTable in) {
      try {
        return computeOn(exec, in);
      } catch (dev.gpudf.columnar.error.GpuOutOfMemoryException e) {
        if (!exec.hasGpu() || !hostTwin) {
          throw e;
        }
        LOG.warn("a batch of {} rows runs on the CPU: {}", in.rowCount(), e.getMessage());
        GpudfBackend.get().ranOnHost();
        try (Exec cpu = Exec.onCpu(allocator)) {
          return computeOn(cpu, in);
        }
      }
    }

    private HostTable computeOn(Exec e, HostTable in) {
      try (Table<?> on = onBackend(e, in); Table<?> result = op.apply(e, on)) {
        return onHost(e, result);
      }
    }

    private void releaseCurrent() {
      if (current != null) {
        current.close();
        current = null;
      }
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        releaseCurrent();
        try (BufferAllocator a = allocator; Exec e = exec; AutoCloseable h = held) {
          // closed in reverse: what the operation held, the context, then the allocator, which checks for leaks
        } catch (Exception ex) {
          throw new IllegalStateException("closing a gpudf task's operator: " + ex.getMessage(), ex);
        }
      }
    }
  }

  /** Every batch of {@code batches} as one table (an empty one of {@code schema} when there are none); the caller closes it. */
  static HostTable gather(java.util.Iterator<ColumnarBatch> batches, StructType schema, Exec exec) {
    List<HostTable> parts = new ArrayList<>();
    try {
      while (batches.hasNext()) {
        parts.add(SparkArrow.toGpudf(batches.next(), schema, exec.allocator()));
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
