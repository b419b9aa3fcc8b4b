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
import org.apache.spark.sql.catalyst.expressions.aggregate.Final$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Partial$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.internal.SQLConf;

/**
 * Spark's aggregates ({@code HashAggregateExec}, {@code SortAggregateExec}, {@code
 * ObjectHashAggregateExec}) on gpudf. The partial half groups each batch by its keys and leaves per
 * group each aggregate's buffer as Spark's own partial aggregate does (COUNT: the count; MIN, MAX:
 * the value; SUM of integers: the sum, NULL over no value; SUM of decimals: the sum, 0 over no
 * value, and whether there was none; AVG of decimals: the sum as for SUM, and the count). The final
 * half, after the shuffle, merges those buffers over its partition's whole input (COUNT, MIN, MAX
 * and SUM, grouped by keys) and computes Spark's result expressions; Spark keeps the final AVG (its
 * decimal division rounds twice), a final with no keys (one row even over no input) and a final
 * sort aggregate (a string's MIN or MAX: its output keeps its keys' order). Sums are
 * taken in ANSI mode only (gpudf fails on an overflow, as Spark's ANSI mode does); sums and
 * averages of floating point are not (their rounding depends on the order Spark adds in). A
 * grouping after the shuffle with no aggregate of its own (the merge of a DISTINCT's partial
 * groups) runs on its partition's whole input too: per batch, a key in two batches came out twice
 * (a COUNT(DISTINCT) counted it twice).
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
    // Spark asks for its input distributed by the keys after the shuffle, where it merges groups
    boolean merge = agg.requiredChildDistributionExpressions().isDefined();
    Plan plan = Plan.of(list(agg.groupingExpressions()), list(agg.aggregateExpressions()), list(agg.resultExpressions()),
        input, SQLConf.get().ansiEnabled());
    if (plan.results() == null && agg.resultExpressions().size() != plan.outputs()) {
      throw new ExprTranslator.Refused("its output is not its keys and the aggregates' buffers");
    }
    if (plan.results() != null && !merge) {
      throw new ExprTranslator.Refused("a final aggregate whose input is not distributed by its keys");
    }
    return new GpudfHashAggregateExec(agg.groupingExpressions(), agg.aggregateExpressions(), agg.resultExpressions(),
        merge, child);
  }

  /**
   * How a batch is aggregated: the key and aggregate input expressions (the work table's columns),
   * the reductions over them, each aggregate's columns as expressions over the group-by's result
   * (partial: its buffer; final: its value), for a final the result expressions over the keys and
   * those values (null for a partial, whose output is its keys and buffers), and conditions over
   * the input of which any row's being true is an overflow Spark's ANSI mode fails on.
   */
  private record Plan(List<Expr> keys, List<Expr> inputs, List<GroupBy.Agg> aggs, List<Expr> buffers, List<Expr> results,
      List<Expr> overflows) {
    int outputs() {
      return keys.size() + buffers.size();
    }

    static Plan of(List<NamedExpression> grouping, List<AggregateExpression> aggregates, List<NamedExpression> results,
        List<Attribute> input, boolean ansi) {
      boolean fin = aggregates.stream().anyMatch(a -> a.mode() == Final$.MODULE$);
      if (fin && grouping.isEmpty()) {
        throw new ExprTranslator.Refused("a final aggregate with no keys (one row even over no input) stays Spark's");
      }
      Plan plan = new Plan(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
          fin ? new ArrayList<>() : null, new ArrayList<>());
      for (NamedExpression g : grouping) {
        plan.keys.add(ExprTranslator.translate((Expression) g, input));
      }
      for (AggregateExpression a : aggregates) {
        if (a.mode() != (fin ? Final$.MODULE$ : Partial$.MODULE$) || a.isDistinct() || a.filter().isDefined()) {
          throw new ExprTranslator.Refused("only plain partial and final aggregates run on gpudf");
        }
        if (fin) {
          plan.merge(a.aggregateFunction(), input, ansi);
        } else {
          plan.partial(a.aggregateFunction(), input, ansi);
        }
      }
      if (fin) {
        // the result expressions read the keys, then each aggregate's value
        List<Attribute> values = new ArrayList<>();
        grouping.forEach(g -> values.add(g.toAttribute()));
        aggregates.forEach(a -> values.add(a.resultAttribute()));
        for (NamedExpression r : results) {
          plan.results.add(ExprTranslator.translate((Expression) r, values));
        }
      }
      return plan;
    }

    /** A partial aggregate of {@code f}: its buffer from each batch's rows. */
    private void partial(AggregateFunction f, List<Attribute> input, boolean ansi) {
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
        aggs.add(new GroupBy.Agg(star ? Reduction.COUNT_ALL : Reduction.COUNT_VALID,
            column(ExprTranslator.translate(args.get(0), input))));
        buffers.add(new Expr.Col(at));
      } else if (f instanceof Min || f instanceof Max) {
        Expression arg = list(f.children()).get(0);
        aggs.add(new GroupBy.Agg(f instanceof Min ? Reduction.MIN : Reduction.MAX,
            column(ExprTranslator.translate(arg, input))));
        buffers.add(new Expr.Col(at));
      } else if (f instanceof Sum || f instanceof Average) {
        Expression arg = list(f.children()).get(0);
        boolean decimal = summed(f, arg, ansi);
        DataType t = ExprTranslator.type(arg.dataType());
        int c = column(ExprTranslator.translate(arg, input));
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

    /** A final aggregate of {@code f}: its value from the buffers of the partial aggregates of its group. */
    private void merge(AggregateFunction f, List<Attribute> input, boolean ansi) {
      List<AttributeReference> attributes = list(f.inputAggBufferAttributes());
      List<Expr> buffer = new ArrayList<>();
      for (AttributeReference b : attributes) {
        buffer.add(ExprTranslator.translate(b, input));
      }
      int at = keys.size() + aggs.size();
      DataType result = ExprTranslator.type(f.dataType());
      if (f instanceof Count) {
        // a group's partial counts: one at least, none NULL
        aggs.add(new GroupBy.Agg(Reduction.SUM, column(buffer.get(0))));
        buffers.add(new Expr.Cast(new Expr.Col(at), result));
      } else if (f instanceof Min || f instanceof Max) {
        aggs.add(new GroupBy.Agg(f instanceof Min ? Reduction.MIN : Reduction.MAX, column(buffer.get(0))));
        buffers.add(new Expr.Col(at));
      } else if (f instanceof Sum && buffer.size() == (summed(f, list(f.children()).get(0), ansi) ? 2 : 1)) {
        Expr sum = buffer.get(0);
        if (buffer.size() == 2) {
          // a decimal sum: a partial over no value holds 0 and isEmpty; one that overflowed, NULL and not
          // isEmpty, which Spark's ANSI mode fails on (a partial of Spark's, whose buffer row keeps NULL)
          Expr isEmpty = buffer.get(1);
          DataType sumType = ExprTranslator.type(attributes.get(0).dataType());
          overflows.add(new Expr.Call(Op.AND, List.of(new Expr.Call(Op.IS_NULL, List.of(sum)),
              new Expr.Call(Op.NOT, List.of(isEmpty)))));
          sum = new Expr.Call(Op.CASE, List.of(isEmpty, new Expr.Lit(sumType, null), sum));
        }
        // NULL where every partial was over no value; the cast back checks the range, as Spark's ANSI mode does
        aggs.add(new GroupBy.Agg(Reduction.SUM, column(sum)));
        buffers.add(new Expr.Cast(new Expr.Col(at), result));
      } else {
        throw new ExprTranslator.Refused(f.prettyName() + "'s final is not aggregated on gpudf");
      }
    }

    /**
     * Whether a SUM or AVG of {@code arg} sums decimals (else integers, for SUM only), or a {@link
     * ExprTranslator.Refused} where gpudf would not sum as Spark does.
     */
    private static boolean summed(AggregateFunction f, Expression arg, boolean ansi) {
      DataType t = ExprTranslator.type(arg.dataType());
      boolean decimal = t.id() == dev.gpudf.columnar.TypeId.DECIMAL;
      boolean integral = t.equals(DataType.INT32) || t.equals(DataType.INT64);
      if (!ansi || !(decimal || (integral && f instanceof Sum))) {
        throw new ExprTranslator.Refused(f.prettyName() + " of " + arg.dataType().simpleString()
            + (ansi ? "" : " outside ANSI mode"));
      }
      return decimal;
    }

    /** The work table's column holding {@code e}: after the keys, one per aggregate input. */
    private int column(Expr e) {
      inputs.add(e);
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
    List<NamedExpression> results = list(resultExpressions);
    // read on the driver: the mode the plan was made in
    boolean ansi = SQLConf.get().ansiEnabled();
    return (exec, table) -> {
      Plan plan = Plan.of(grouping, aggregates, results, input, ansi);
      // every decimal sum's overflow in one condition: one reduction, one wait, however many sums
      java.util.Optional<Expr> overflow = plan.overflows().stream()
          .reduce((x, y) -> new Expr.Call(Op.OR, List.of(x, y)));
      if (overflow.isPresent()) {
        try (dev.gpudf.columnar.Column c = TableOps.evaluate(exec, table, overflow.get())) {
          if (Boolean.TRUE.equals(TableOps.reduce(exec, c, Reduction.MAX).value())) {
            throw new ArithmeticException("[ARITHMETIC_OVERFLOW] a partial decimal sum overflowed (NULL in its buffer)"
                + " in ANSI mode");
          }
        }
      }
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
        if (plan.results() == null) {
          return evaluate(exec, groups, out);
        }
        try (Table<?> values = evaluate(exec, groups, out)) {
          return evaluate(exec, values, plan.results());
        }
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
