package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.SortKey;
import dev.gpudf.kernels.TableOps;
import dev.gpudf.kernels.Window.Frame;
import dev.gpudf.kernels.Window.Function;
import dev.gpudf.kernels.Window.Kind;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelTraitSet;
import org.apache.calcite.rel.RelFieldCollation;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelWriter;
import org.apache.calcite.rel.core.Window;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexWindowBound;

/**
 * Window functions ({@code f(...) OVER (PARTITION BY ... ORDER BY ... frame)}): for each group of
 * functions that share a window, the rows are sorted by partition then order keys (one sort for
 * the group, none where an earlier group's order serves it) and {@link dev.gpudf.kernels.Window}
 * computes the group's columns, which are appended to the input's, on the input's backend. A
 * RANGE frame with an offset runs on the CPU twin only: there a GPU session copies the input to
 * the host and the result back, and EXPLAIN says {@code backend=[cpu]}.
 */
public final class GpuWindow extends Window implements GpuRel {
  GpuWindow(RelOptCluster cluster, RelTraitSet traits, RelNode input, List<RexLiteral> constants, RelDataType rowType,
      List<Group> groups) {
    super(cluster, traits, input, constants, rowType, groups);
  }

  @Override
  public RelNode copy(RelTraitSet traitSet, List<RelNode> inputs) {
    return new GpuWindow(getCluster(), traitSet, sole(inputs), constants, getRowType(), groups);
  }

  @Override
  public Window copy(List<RexLiteral> constants) {
    return new GpuWindow(getCluster(), getTraitSet(), getInput(), constants, getRowType(), groups);
  }

  @Override
  public RelWriter explainTerms(RelWriter pw) {
    return super.explainTerms(pw).itemIf("backend", "cpu", !runsOnGpu());
  }

  /** Whether a GPU session computes every function on the device (RANGE frames with an offset run on the host). */
  boolean runsOnGpu() {
    for (Group g : groups) {
      for (RexWinAggCall call : g.aggCalls) {
        if (!dev.gpudf.kernels.Window.runsOnGpu(function(call, g, this))) {
          return false;
        }
      }
    }
    return true;
  }

  /** Why this window cannot run, or null when it can. */
  static String unsupported(Window w) {
    for (Group g : w.groups) {
      try {
        frame(g, w);
        for (RexWinAggCall call : g.aggCalls) {
          function(call, g, w);
        }
      } catch (NotSupportedException e) {
        return e.getMessage();
      }
    }
    return null;
  }

  @Override
  public Table<?> execute(QueryContext ctx) {
    String why = unsupported(this);
    if (why != null) {
      throw new NotSupportedException(why);
    }
    if (!runsOnGpu()) {
      return HostFallback.inputsViaHost(ctx, this, inputs -> (HostTable) compute(ctx, inputs.get(0)));
    }
    try (Table<?> input = input(ctx, 0)) {
      return compute(ctx, input);
    }
  }

  /** The input's columns and then every group's, group by group, on the input's backend. */
  private Table<?> compute(QueryContext ctx, Table<?> input) {
    input.retain();
    Table<?> t = input;
    try {
      List<SortKey> sortedBy = List.of();
      for (Group g : groups) {
        List<SortKey> keys = sortKeys(g);
        Table<?> next = withGroup(ctx, t, g, startsWith(sortedBy, keys) ? List.of() : keys);
        t.close();
        t = next;
        sortedBy = startsWith(sortedBy, keys) ? sortedBy : keys;
      }
      return TableOps.renamed(ctx.exec(), t, getRowType().getFieldNames());
    } finally {
      t.close();
    }
  }

  /** The rows' order a group needs: its partition keys (ascending), then its order keys. */
  private static List<SortKey> sortKeys(Group g) {
    List<SortKey> keys = new ArrayList<>();
    for (int k : g.keys) {
      keys.add(SortKey.asc(k));
    }
    keys.addAll(orderKeys(g));
    return keys;
  }

  private static List<SortKey> orderKeys(Group g) {
    List<SortKey> order = new ArrayList<>();
    for (RelFieldCollation f : g.orderKeys.getFieldCollations()) {
      order.add(GpuSort.sortKey(f));
    }
    return order;
  }

  /** Whether rows sorted by {@code sorted} are sorted by {@code keys} too (a prefix of them). */
  private static boolean startsWith(List<SortKey> sorted, List<SortKey> keys) {
    return sorted.size() >= keys.size() && sorted.subList(0, keys.size()).equals(keys);
  }

  /**
   * {@code t} with {@code g}'s columns appended, after sorting it by {@code keys} (none where
   * {@code t}'s rows are in the order {@code g} needs already: an earlier group's sort serves it).
   */
  private Table<?> withGroup(QueryContext ctx, Table<?> t, Group g, List<SortKey> keys) {
    int[] partition = g.keys.toArray();
    List<SortKey> order = orderKeys(g);
    List<Function> functions = new ArrayList<>();
    for (RexWinAggCall call : g.aggCalls) {
      functions.add(function(call, g, this));
    }
    try (Table<?> sorted = keys.isEmpty() ? retained(t) : TableOps.sort(ctx.exec(), t, keys)) {
      List<Column> computed = new ArrayList<>(TableOps.window(ctx.exec(), sorted, partition, order, functions));
      List<Column> columns = new ArrayList<>();
      List<String> names = new ArrayList<>(sorted.names());
      try {
        for (int c = 0; c < sorted.columnCount(); c++) {
          sorted.column(c).retain();
          columns.add(sorted.column(c));
        }
        for (int i = 0; i < computed.size(); i++) {
          Column c = typed(ctx, sorted, computed.get(i), g.aggCalls.get(i).getType());
          computed.set(i, null);
          columns.add(g.aggCalls.get(i).getOperands().size() > 2 ? withDefault(ctx, sorted, partition, order, g.aggCalls.get(i),
              functions.get(i), c) : c);
          names.add("$w" + names.size());
        }
      } catch (RuntimeException e) {
        columns.forEach(Column::close);
        computed.stream().filter(java.util.Objects::nonNull).forEach(Column::close);
        throw e;
      }
      return TableOps.table(ctx.exec(), sorted, names, columns, sorted.rowCount());
    }
  }

  /**
   * LAG or LEAD with a default: {@code shifted} (which this takes) where the row it reads lies in
   * the partition, else the default (a constant or a column of the current row).
   */
  private Column withDefault(QueryContext ctx, Table<?> sorted, int[] partition, List<SortKey> order, RexWinAggCall call,
      Function f, Column shifted) {
    Frame whole = new Frame(false, dev.gpudf.kernels.Window.UNBOUNDED, dev.gpudf.kernels.Window.UNBOUNDED);
    List<? extends Column> position;
    try {
      position = TableOps.window(ctx.exec(), sorted, partition, order,
          List.of(new Function(Kind.ROW_NUMBER, -1, 0, whole), new Function(Kind.COUNT_ALL, -1, 0, whole)));
    } catch (RuntimeException e) {
      shifted.close();
      throw e;
    }
    List<Column> columns = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (int c = 0; c < sorted.columnCount(); c++) {
      sorted.column(c).retain();
      columns.add(sorted.column(c));
      names.add("$" + c);
    }
    columns.add(shifted);
    columns.addAll(position);
    names.addAll(List.of("$shifted", "$rn", "$count"));
    try (Table<?> t = TableOps.table(ctx.exec(), sorted, names, columns, sorted.rowCount())) {
      int at = sorted.columnCount();
      RexNode fallback = call.getOperands().get(2);
      int inputColumns = getInput().getRowType().getFieldCount();
      Expr value = fallback instanceof RexInputRef ref && ref.getIndex() < inputColumns ? Expr.col(ref.getIndex())
          : RexToExpr.translate(fallback instanceof RexInputRef ref ? constants.get(ref.getIndex() - inputColumns) : fallback,
              t.types(), getCluster(), ctx.parameters());
      long reach = f.kind() == Kind.LAG ? -f.n() : f.n();
      Expr target = Expr.call(dev.gpudf.kernels.Op.ADD, Expr.col(at + 1), Expr.lit(reach));
      Expr outside = Expr.call(dev.gpudf.kernels.Op.OR, Expr.call(dev.gpudf.kernels.Op.LT, target, Expr.lit(1L)),
          Expr.call(dev.gpudf.kernels.Op.GT, target, Expr.col(at + 2)));
      DataType type = SqlTypes.fromCalcite(call.getType());
      return TableOps.evaluate(ctx.exec(), t, Expr.caseWhen(List.of(outside, Expr.cast(value, type)), Expr.col(at)));
    }
  }

  private static Table<?> retained(Table<?> t) {
    t.retain();
    return t;
  }

  /** {@code c} cast to the type the planner gave the call, where the kernel's result type differs; takes {@code c}. */
  private static Column typed(QueryContext ctx, Table<?> like, Column c, RelDataType type) {
    DataType want = SqlTypes.fromCalcite(type);
    if (c.type().equals(want)) {
      return c;
    }
    try (Table<?> one = TableOps.table(ctx.exec(), like, List.of("v"), List.of(c), c.rowCount())) {
      return TableOps.evaluate(ctx.exec(), one, Expr.cast(Expr.col(0), want));
    }
  }

  private static Frame frame(Group g, Window w) {
    return new Frame(g.isRows, bound(g.lowerBound, w, true), bound(g.upperBound, w, false));
  }

  /** How far a bound reaches back ({@code back}: the lower bound) or ahead, in rows or peer groups. */
  private static long bound(RexWindowBound b, Window w, boolean back) {
    if (b.isUnbounded()) {
      if (b.isUnboundedPreceding() != back) {
        throw new NotSupportedException("a frame that starts at UNBOUNDED FOLLOWING or ends at UNBOUNDED PRECEDING is empty");
      }
      return dev.gpudf.kernels.Window.UNBOUNDED;
    }
    if (b.isCurrentRow()) {
      return 0;
    }
    if (b.getOffset() != null && org.apache.calcite.sql.type.SqlTypeUtil.isInterval(b.getOffset().getType())) {
      throw new NotSupportedException("a frame offset given as an INTERVAL is not supported yet: use a number of days");
    }
    long n = constant(b.getOffset(), w);
    if (n < 0) {
      throw new dev.gpudf.columnar.error.UserException("a frame offset must not be negative: " + n);
    }
    // lower: n PRECEDING reaches n back, n FOLLOWING -n back; upper: n FOLLOWING n ahead
    return back == b.isPreceding() ? n : -n;
  }

  private static long constant(RexNode node, Window w) {
    RexNode n = node;
    if (n instanceof RexInputRef ref && ref.getIndex() >= w.getInput().getRowType().getFieldCount()) {
      n = w.constants.get(ref.getIndex() - w.getInput().getRowType().getFieldCount());
    }
    if (n instanceof RexLiteral lit && lit.getValueAs(Long.class) != null) {
      return lit.getValueAs(Long.class);
    }
    throw new NotSupportedException("a window offset must be a constant, not " + node);
  }

  private static Function function(RexWinAggCall call, Group g, Window w) {
    if (call.distinct) {
      throw new NotSupportedException("DISTINCT in a window function is not supported yet: " + call);
    }
    if (call.ignoreNulls) {
      throw new NotSupportedException("IGNORE NULLS in a window function is not supported yet: " + call);
    }
    if (g.exclude != org.apache.calcite.rex.RexWindowExclusion.EXCLUDE_NO_OTHER) {
      throw new NotSupportedException("frame EXCLUDE clauses are not supported yet");
    }
    List<RexNode> ops = call.getOperands();
    int inputColumns = w.getInput().getRowType().getFieldCount();
    int arg = ops.isEmpty() ? -1 : ops.get(0) instanceof RexInputRef r && r.getIndex() < inputColumns ? r.getIndex() : -2;
    String name = call.getOperator().getName().toUpperCase(java.util.Locale.ROOT);
    Kind kind = switch (call.getKind()) {
      case ROW_NUMBER -> Kind.ROW_NUMBER;
      case RANK -> Kind.RANK;
      case DENSE_RANK -> Kind.DENSE_RANK;
      case PERCENT_RANK -> Kind.PERCENT_RANK;
      case CUME_DIST -> Kind.CUME_DIST;
      case NTILE -> Kind.NTILE;
      case LAG -> Kind.LAG;
      case LEAD -> Kind.LEAD;
      case FIRST_VALUE -> Kind.FIRST_VALUE;
      case LAST_VALUE -> Kind.LAST_VALUE;
      case NTH_VALUE -> Kind.NTH_VALUE;
      case COUNT -> ops.isEmpty() ? Kind.COUNT_ALL : Kind.COUNT;
      case SUM -> Kind.SUM;
      case SUM0 -> Kind.SUM0;
      case AVG -> Kind.AVG;
      case MIN -> Kind.MIN;
      case MAX -> Kind.MAX;
      default -> throw new NotSupportedException("window function " + name + " is not supported yet");
    };
    boolean needsArg = switch (kind) {
      case ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, COUNT_ALL -> false;
      default -> true;
    };
    if (needsArg && arg < 0) {
      throw new NotSupportedException("window function " + name + " over a constant or expression is not supported yet");
    }
    if (kind == Kind.COUNT && ops.size() > 1) {
      throw new NotSupportedException("COUNT of several columns in a window is not supported yet");
    }
    long n = switch (kind) {
      case NTILE -> constant(ops.get(0), w);
      case LAG, LEAD -> ops.size() > 1 ? constant(ops.get(1), w) : 1;
      case NTH_VALUE -> constant(ops.get(1), w);
      default -> 0;
    };
    if ((kind == Kind.LAG || kind == Kind.LEAD) && ops.size() > 2 && !(ops.get(2) instanceof RexInputRef)
        && !(ops.get(2) instanceof RexLiteral)) {
      throw new NotSupportedException(name + " with a computed default value is not supported yet");
    }
    if ((kind == Kind.NTILE || kind == Kind.NTH_VALUE) && n <= 0) {
      throw new dev.gpudf.columnar.error.UserException(name + "'s argument must be positive, not " + n);
    }
    if (kind == Kind.NTILE) {
      arg = -1;
    }
    return new Function(kind, arg, n, frame(g, w));
  }
}
