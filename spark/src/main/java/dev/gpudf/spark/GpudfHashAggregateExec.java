package dev.gpudf.spark;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.GroupBy;
import dev.gpudf.kernels.Op;
import dev.gpudf.kernels.Reduction;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Partial$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.internal.SQLConf;

/**
 * The partial half of Spark's aggregates ({@code HashAggregateExec}, {@code SortAggregateExec},
 * {@code ObjectHashAggregateExec}) on gpudf: each batch grouped by its keys,
 * and per group each aggregate's buffer as Spark's own partial aggregate leaves it (COUNT: the
 * count; MIN, MAX: the value; SUM of integers: the sum, NULL over no value; SUM of decimals: the
 * sum, 0 over no value, and whether there was none; AVG of decimals: the sum as for SUM, and the
 * count). Spark's final aggregate merges the buffers, from any number of rows per group. Sums are
 * taken in ANSI mode only (gpudf fails on an overflow, as Spark's ANSI mode does); sums and
 * averages of floating point are not (their rounding depends on the order Spark adds in).
 * A grouping after the shuffle with no aggregate of its own (the merge of a DISTINCT's partial
 * groups) runs on its partition's whole input at once: per batch, a key in two batches came out
 * twice (a COUNT(DISTINCT) counted it twice).
 */
public final class GpudfHashAggregateExec extends GpudfUnaryExec {
  private final scala.collection.immutable.Seq<NamedExpression> groupingExpressions;
  private final scala.collection.immutable.Seq<AggregateExpression> aggregateExpressions;
  private final scala.collection.immutable.Seq<NamedExpression> resultExpressions;
  // whether it merges (its input distributed by its keys) rather than groups each batch
  private final boolean merge;

  public GpudfHashAggregateExec(scala.collection.immutable.Seq<NamedExpression> groupingExpressions,
      scala.collection.immutable.Seq<AggregateExpression> aggregateExpressions,
      scala.collection.immutable.Seq<NamedExpression> resultExpressions, boolean merge, SparkPlan child) {
    super(child);
    this.groupingExpressions = groupingExpressions;
    this.aggregateExpressions = aggregateExpressions;
    this.resultExpressions = resultExpressions;
    this.merge = merge;
  }

  /**
   * {@code agg} (a hash, sort or object-hash aggregate) on gpudf, or a {@link
   * ExprTranslator.Refused} saying why it stays on Spark ({@code node} is {@code agg} as a plan). A partial sort aggregate keeps the sort
   * under it, which it no longer needs.
   */
  static GpudfHashAggregateExec of(BaseAggregateExec agg, SparkPlan node) {
    SparkPlan child = node.children().apply(0);
    List<Attribute> input = list(child.output());
    Plan plan = Plan.of(list(agg.groupingExpressions()), list(agg.aggregateExpressions()), input,
        SQLConf.get().ansiEnabled());
    if (agg.resultExpressions().size() != plan.outputs()) {
      throw new ExprTranslator.Refused("its output is not its keys and the aggregates' buffers");
    }
    // Spark asks for its input distributed by the keys after the shuffle, where it merges groups
    return new GpudfHashAggregateExec(agg.groupingExpressions(), agg.aggregateExpressions(), agg.resultExpressions(),
        agg.requiredChildDistributionExpressions().isDefined(), child);
  }

  /**
   * How a batch is aggregated: the key and aggregate input expressions (the work table's columns),
   * the reductions over them, and each buffer column as an expression over the group-by's result.
   */
  private record Plan(List<Expr> keys, List<Expr> inputs, List<GroupBy.Agg> aggs, List<Expr> buffers) {
    int outputs() {
      return keys.size() + buffers.size();
    }

    static Plan of(List<NamedExpression> grouping, List<AggregateExpression> aggregates, List<Attribute> input,
        boolean ansi) {
      List<Expr> keys = new ArrayList<>();
      for (NamedExpression g : grouping) {
        keys.add(ExprTranslator.translate((Expression) g, input));
      }
      List<Expr> inputs = new ArrayList<>();
      List<GroupBy.Agg> aggs = new ArrayList<>();
      List<Expr> buffers = new ArrayList<>();
      for (AggregateExpression a : aggregates) {
        if (a.mode() != Partial$.MODULE$ || a.isDistinct() || a.filter().isDefined()) {
          throw new ExprTranslator.Refused("only plain partial aggregates run on gpudf");
        }
        AggregateFunction f = a.aggregateFunction();
        List<AttributeReference> buffer = list(f.aggBufferAttributes());
        // the group-by's result: the keys, then one column per reduction, in order
        int at = keys.size() + aggs.size();
        if (f instanceof Count c) {
          List<Expression> args = list(c.children());
          boolean star = args.size() == 1 && args.get(0).foldable() && !args.get(0).nullable();
          if (!star && args.size() != 1) {
            throw new ExprTranslator.Refused("count of several columns");
          }
          // COUNT(*) counts the rows of its constant's column, so that a work table is never empty of columns
          aggs.add(new GroupBy.Agg(star ? Reduction.COUNT_ALL : Reduction.COUNT_VALID, column(args.get(0), input, keys, inputs)));
          buffers.add(new Expr.Col(at));
        } else if (f instanceof Min || f instanceof Max) {
          Expression arg = list(f.children()).get(0);
          aggs.add(new GroupBy.Agg(f instanceof Min ? Reduction.MIN : Reduction.MAX, column(arg, input, keys, inputs)));
          buffers.add(new Expr.Col(at));
        } else if (f instanceof Sum || f instanceof Average) {
          Expression arg = list(f.children()).get(0);
          DataType t = ExprTranslator.type(arg.dataType());
          boolean decimal = t.id() == dev.gpudf.columnar.TypeId.DECIMAL;
          boolean integral = t.equals(DataType.INT32) || t.equals(DataType.INT64);
          if (!ansi || !(decimal || (integral && f instanceof Sum))) {
            throw new ExprTranslator.Refused(f.prettyName() + " of " + arg.dataType().simpleString()
                + (ansi ? "" : " outside ANSI mode"));
          }
          int c = column(arg, input, keys, inputs);
          aggs.add(new GroupBy.Agg(Reduction.SUM, c));
          aggs.add(new GroupBy.Agg(Reduction.COUNT_VALID, c));
          DataType sumType = ExprTranslator.type(buffer.get(0).dataType());
          Expr sum = new Expr.Col(at);
          Expr count = new Expr.Col(at + 1);
          if (decimal) {
            // Spark's decimal buffers start at 0, not NULL
            sum = new Expr.Call(Op.COALESCE, List.of(sum, new Expr.Lit(t, java.math.BigDecimal.ZERO)));
          }
          buffers.add(new Expr.Cast(sum, sumType));
          if (buffer.size() == 2 && f instanceof Sum && decimal) {
            // isEmpty: no value was summed
            buffers.add(new Expr.Call(Op.EQ, List.of(count, new Expr.Lit(DataType.INT64, 0L))));
          } else if (buffer.size() == 2 && f instanceof Average) {
            buffers.add(count);
          } else if (buffer.size() != 1) {
            throw new ExprTranslator.Refused(f.prettyName() + "'s buffer of " + buffer.size() + " values");
          }
        } else {
          throw new ExprTranslator.Refused(f.prettyName() + " is not aggregated on gpudf");
        }
      }
      return new Plan(keys, inputs, aggs, buffers);
    }

    /** The work table's column holding {@code e}: after the keys, one per aggregate input. */
    private static int column(Expression e, List<Attribute> input, List<Expr> keys, List<Expr> inputs) {
      inputs.add(ExprTranslator.translate(e, input));
      return keys.size() + inputs.size() - 1;
    }
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return attributes(resultExpressions);
  }

  @Override
  public String nodeName() {
    return "GpudfHashAggregate";
  }

  @Override
  Operation operation(List<Attribute> input) {
    List<NamedExpression> grouping = list(groupingExpressions);
    List<AggregateExpression> aggregates = list(aggregateExpressions);
    // read on the driver: the mode the plan was made in
    boolean ansi = SQLConf.get().ansiEnabled();
    return (exec, table) -> {
      Plan plan = Plan.of(grouping, aggregates, input, ansi);
      List<Expr> work = new ArrayList<>(plan.keys());
      work.addAll(plan.inputs());
      int[] keys = java.util.stream.IntStream.range(0, plan.keys().size()).toArray();
      List<String> names = new ArrayList<>();
      for (int i = 0; i < keys.length + plan.aggs().size(); i++) {
        names.add("c" + i);
      }
      try (Table<?> columns = evaluate(exec, table, work);
          Table<?> groups = TableOps.groupBy(exec, columns, keys, plan.aggs(), names)) {
        List<Expr> out = new ArrayList<>();
        for (int k = 0; k < keys.length; k++) {
          out.add(new Expr.Col(k));
        }
        out.addAll(plan.buffers());
        return evaluate(exec, groups, out);
      }
    };
  }

  @Override
  boolean wholePartition() {
    return merge;
  }

  @Override
  GpudfUnaryExec withChild(SparkPlan child) {
    return new GpudfHashAggregateExec(groupingExpressions, aggregateExpressions, resultExpressions, merge, child);
  }

  @Override
  Object[] arguments() {
    return new Object[] {groupingExpressions, aggregateExpressions, resultExpressions, merge};
  }
}
