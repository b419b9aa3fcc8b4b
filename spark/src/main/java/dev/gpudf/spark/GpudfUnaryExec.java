package dev.gpudf.spark;

import dev.gpudf.kernels.Exec;
import java.util.List;
import java.util.Objects;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** A gpudf operator with one input: {@link #operation} runs on each of its child's batches. */
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

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    List<Attribute> input = list(child.output());
    StructType schema = child.schema();
    Operation op = operation(input);
    String name = nodeName();
    int batchRows = batchRows();
    OpMetrics m = opMetrics();
    return child.executeColumnar().toJavaRDD().mapPartitions(batches -> {
      Exec exec = taskExec(name);
      BatchIterator out = new BatchIterator(batches, schema, op, exec, null, batchRows, true, m);
      TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
      return out;
    }).rdd();
  }
}
