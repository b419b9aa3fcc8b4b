package dev.gpudf.spark;

import dev.gpudf.columnar.Column;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.TableOps;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.SparkPlan;

/** Spark's {@code FilterExec} on gpudf: the rows of its child where {@code condition} is true. */
public final class GpudfFilterExec extends GpudfUnaryExec {
  private final Expression condition;

  public GpudfFilterExec(Expression condition, SparkPlan child) {
    super(child);
    this.condition = condition;
  }

  public Expression condition() {
    return condition;
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return child().output();
  }

  @Override
  public String nodeName() {
    return "GpudfFilter";
  }

  @Override
  Operation operation(List<Attribute> input) {
    Expression c = condition;
    return (exec, table) -> {
      Expr e = ExprTranslator.translate(c, input);
      try (Column keep = TableOps.evaluate(exec, table, e)) {
        return TableOps.filter(exec, table, keep);
      }
    };
  }

  @Override
  GpudfUnaryExec withChild(SparkPlan child) {
    return new GpudfFilterExec(condition, child);
  }

  @Override
  Object[] arguments() {
    return new Object[] {condition};
  }
}
