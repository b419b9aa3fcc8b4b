package dev.gpudf.spark;

import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import java.util.List;
import java.util.Objects;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A gpudf operator with one input: {@link #operation} runs on each of its child's batches, or,
 * where {@link #wholePartition} says so, once on all of a partition's batches gathered into one
 * table (a sort, a final aggregate).
 */
abstract class GpudfUnaryExec extends GpudfExec {
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

  @Override
  public SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> children) {
    return withChild(children.apply(0));
  }

  @Override
  public scala.collection.immutable.Seq<SparkPlan> children() {
    return seq(List.of(child));
  }

  /** Whether {@link #operation} runs once on a partition's whole input rather than on each batch. */
  boolean wholePartition() {
    return false;
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    List<Attribute> input = list(child.output());
    StructType schema = child.schema();
    Operation op = operation(input);
    String name = nodeName();
    int batchRows = batchRows();
    OpMetrics m = opMetrics();
    boolean whole = wholePartition();
    return child.executeColumnar().toJavaRDD().mapPartitions(batches -> {
      Exec exec = taskExec(name);
      BatchIterator out = whole ? once(batches, schema, op, exec, m)
          : new BatchIterator(batches, schema, op, exec, null, batchRows, true, m);
      TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
      return out;
    }).rdd();
  }

  /**
   * {@code op} run once on all of {@code batches} gathered into one table, its result sent as one
   * batch; a failed gather closes {@code exec}, as the iterator would have.
   */
  private static BatchIterator once(java.util.Iterator<ColumnarBatch> batches, StructType schema, Operation op, Exec exec,
      OpMetrics m) {
    HostTable all;
    try {
      all = gather(batches, schema, exec, m);
    } catch (RuntimeException e) {
      try (org.apache.arrow.memory.BufferAllocator a = exec.allocator(); Exec x = exec) {
        throw e;
      }
    }
    Once once = new Once(all);
    return new BatchIterator(once, op, exec, once, true, m);
  }

  /** One table, given out once; closed here if it never was (a task that ends before it reads it). */
  private static final class Once implements java.util.Iterator<Parts>, AutoCloseable {
    private HostTable table;

    Once(HostTable table) {
      this.table = table;
    }

    @Override
    public boolean hasNext() {
      return table != null;
    }

    @Override
    public Parts next() {
      if (table == null) {
        throw new java.util.NoSuchElementException();
      }
      Parts p = new Parts(List.of(table));
      table = null;
      return p;
    }

    @Override
    public void close() {
      if (table != null) {
        table.close();
        table = null;
      }
    }
  }
}
