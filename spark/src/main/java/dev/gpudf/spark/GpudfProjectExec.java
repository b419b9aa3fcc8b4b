package dev.gpudf.spark;

import dev.gpudf.kernels.Expr;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.execution.SparkPlan;

/** Spark's {@code ProjectExec} on gpudf: each of {@code projectList} computed over its child's rows. */
public final class GpudfProjectExec extends GpudfUnaryExec {
  private final scala.collection.immutable.Seq<NamedExpression> projectList;

  public GpudfProjectExec(scala.collection.immutable.Seq<NamedExpression> projectList, SparkPlan child) {
    super(child);
    this.projectList = projectList;
  }

  public scala.collection.immutable.Seq<NamedExpression> projectList() {
    return projectList;
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return attributes(projectList);
  }

  @Override
  public String nodeName() {
    return "GpudfProject";
  }

  @Override
  Operation operation(List<Attribute> input) {
    List<NamedExpression> exprs = list(projectList);
    return (exec, table) -> {
      List<Expr> out = new ArrayList<>();
      for (NamedExpression ne : exprs) {
        out.add(ExprTranslator.translate((org.apache.spark.sql.catalyst.expressions.Expression) ne, input));
      }
      return evaluate(exec, table, out);
    };
  }

  @Override
  GpudfUnaryExec withChild(SparkPlan child) {
    return new GpudfProjectExec(projectList, child);
  }

  @Override
  Object[] arguments() {
    return new Object[] {projectList};
  }
}
