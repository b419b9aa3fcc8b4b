package dev.gpudf.spark;

import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A gpudf operator in a Spark plan with one input: it takes its child's columnar batches, runs
 * {@link #operation} on each as a gpudf table, and hands the result to Spark as Arrow columns
 * ({@link SparkArrow}). Row-based parents read it through the transition Spark puts above it. Its
 * product elements are its constructor's arguments, in order (its expressions, its child last),
 * so that Spark can copy it with new expressions or children.
 */
abstract class GpudfUnaryExec extends SparkPlan {
  /** What the operator does to one batch, on an executor; serializable, as Spark ships it there. */
  interface Operation extends Serializable {
    /** The result of {@code table} (which the caller closes), a table the caller closes too. */
    HostTable apply(Exec exec, HostTable table);
  }

  private final SparkPlan child;

  GpudfUnaryExec(SparkPlan child) {
    this.child = Objects.requireNonNull(child, "child");
  }

  public SparkPlan child() {
    return child;
  }

  /** What runs on each batch, made from this node's expressions over {@code input}, the child's columns. */
  abstract Operation operation(List<Attribute> input);

  /** The same operator over {@code child}. */
  abstract GpudfUnaryExec withChild(SparkPlan child);

  /** The constructor's arguments but the last, the child: the operator's expressions. */
  abstract Object[] arguments();

  @Override
  public SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> children) {
    return withChild(children.apply(0));
  }

  @Override
  public int productArity() {
    return arguments().length + 1;
  }

  @Override
  public Object productElement(int n) {
    Object[] args = arguments();
    if (n < 0 || n > args.length) {
      throw new IndexOutOfBoundsException(n);
    }
    return n == args.length ? child : args[n];
  }

  @Override
  public scala.collection.immutable.Seq<SparkPlan> children() {
    return seq(List.of(child));
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
  public RDD<ColumnarBatch> doExecuteColumnar() {
    List<Attribute> input = list(child.output());
    StructType schema = child.schema();
    Operation op = operation(input);
    String name = nodeName();
    return child.executeColumnar().toJavaRDD().mapPartitions(batches -> {
      BufferAllocator allocator = GpudfBackend.get().taskAllocator(name + " task " + TaskContext.get().taskAttemptId());
      BatchIterator out = new BatchIterator(batches, schema, op, allocator);
      TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
      return out;
    }).rdd();
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
    GpudfUnaryExec o = (GpudfUnaryExec) other;
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

  /** A table of {@code exprs} over {@code table}, which the caller closes: a bare column shared, any other computed. */
  static HostTable evaluate(Exec exec, HostTable table, List<dev.gpudf.kernels.Expr> exprs) {
    List<dev.gpudf.columnar.HostColumn> columns = new ArrayList<>();
    List<String> names = new ArrayList<>();
    try {
      for (dev.gpudf.kernels.Expr e : exprs) {
        if (e instanceof dev.gpudf.kernels.Expr.Col c) {
          dev.gpudf.columnar.HostColumn shared = table.column(c.index());
          shared.retain();
          columns.add(shared);
        } else {
          columns.add(dev.gpudf.kernels.Evaluate.evaluate(exec, table, e));
        }
        names.add("c" + names.size());
      }
    } catch (RuntimeException ex) {
      columns.forEach(dev.gpudf.columnar.HostColumn::close);
      throw ex;
    }
    return new HostTable(names, columns, table.rowCount());
  }

  static <T> scala.collection.immutable.Seq<T> seq(List<T> items) {
    return CollectionConverters.asScala(items).toList();
  }

  static <T> List<T> list(scala.collection.Seq<T> items) {
    return new ArrayList<>(CollectionConverters.asJava(items));
  }

  /**
   * One task's stream of results: each input batch becomes an Arrow table, then a gpudf table, and
   * its result goes out as the next batch, valid until the one after is asked for (Spark's
   * contract), so each output is closed when the next is made, the last when the input ends or the
   * task completes (a parent that stops early, such as a LIMIT, does not drain it).
   */
  private static final class BatchIterator implements java.util.Iterator<ColumnarBatch>, AutoCloseable {
    private final java.util.Iterator<ColumnarBatch> input;
    private final StructType schema;
    private final Operation op;
    private final BufferAllocator allocator;
    private final Exec exec;
    private SparkArrow.Output current;
    private boolean closed;

    BatchIterator(java.util.Iterator<ColumnarBatch> input, StructType schema, Operation op, BufferAllocator allocator) {
      this.input = input;
      this.schema = schema;
      this.op = op;
      this.allocator = allocator;
      this.exec = Exec.onCpu(allocator);
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
      ColumnarBatch batch = input.next();
      try (HostTable in = SparkArrow.toGpudf(batch, schema, allocator); HostTable result = op.apply(exec, in)) {
        current = SparkArrow.toSpark(result, allocator);
      }
      return current.batch();
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
        exec.close();
        allocator.close();
      }
    }
  }
}
