package dev.gpudf.spark;

import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.SortKey;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;

/**
 * Spark's {@code SortExec} on gpudf: each partition's batches gathered into one table and sorted
 * by columns, as Spark orders them (its NULL order per key; NaN above every other value; -0.0
 * equal to 0.0; strings by their UTF-8 bytes; ties in no promised order, as Spark's sort), then
 * sent as one batch. A key that is not a column keeps the sort on Spark. With a limit ({@code
 * GpudfTopN}) only each partition's first {@code limit} rows in that order are sent: the part of
 * Spark's {@code TakeOrderedAndProjectExec} (ORDER BY ... LIMIT) that reads every row, under it.
 */
public final class GpudfSortExec extends GpudfUnaryExec {
  private final scala.collection.immutable.Seq<SortOrder> sortOrder;
  private final boolean global;
  // the rows each partition keeps, or -1: all of them
  private final int limit;

  public GpudfSortExec(scala.collection.immutable.Seq<SortOrder> sortOrder, boolean global, int limit, SparkPlan child) {
    super(child);
    this.sortOrder = sortOrder;
    this.global = global;
    this.limit = limit;
  }

  /** {@code sort} on gpudf, or a {@link ExprTranslator.Refused} saying why it stays on Spark. */
  static GpudfSortExec of(SortExec sort) {
    keys(list(sort.sortOrder()), list(sort.child().output()));
    return new GpudfSortExec(sort.sortOrder(), sort.global(), -1, sort.child());
  }

  /** Each partition of {@code child}'s first {@code limit} rows in {@code order}, on gpudf; or a {@link ExprTranslator.Refused}. */
  static GpudfSortExec topN(scala.collection.immutable.Seq<SortOrder> order, int limit, SparkPlan child) {
    if (limit < 0) {
      throw new ExprTranslator.Refused("a limit of " + limit + " rows");
    }
    keys(list(order), list(child.output()));
    return new GpudfSortExec(order, false, limit, child);
  }

  /** The rows each partition keeps, or -1 for all: a top-N when not -1. */
  public int limit() {
    return limit;
  }

  public scala.collection.immutable.Seq<SortOrder> sortOrder() {
    return sortOrder;
  }

  public boolean global() {
    return global;
  }

  private static List<SortKey> keys(List<SortOrder> orders, List<Attribute> input) {
    List<SortKey> keys = new ArrayList<>();
    for (SortOrder o : orders) {
      if (!(ExprTranslator.translate(o.child(), input) instanceof Expr.Col c)) {
        throw new ExprTranslator.Refused("a sort key that is not a column: " + o.child().sql());
      }
      keys.add(new SortKey(c.index(), o.direction() == Ascending$.MODULE$, o.nullOrdering() == NullsFirst$.MODULE$));
    }
    return keys;
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return child().output();
  }

  @Override
  public scala.collection.immutable.Seq<SortOrder> outputOrdering() {
    return sortOrder;
  }

  @Override
  public Partitioning outputPartitioning() {
    return child().outputPartitioning();
  }

  @Override
  public String nodeName() {
    return limit < 0 ? "GpudfSort" : "GpudfTopN";
  }

  @Override
  Operation operation(List<Attribute> input) {
    List<SortKey> keys = keys(list(sortOrder), input);
    // shipped to executors as plain arrays (a SortKey is not serializable)
    int[] columns = keys.stream().mapToInt(SortKey::column).toArray();
    boolean[] ascending = new boolean[keys.size()];
    boolean[] nullsFirst = new boolean[keys.size()];
    for (int i = 0; i < keys.size(); i++) {
      ascending[i] = keys.get(i).ascending();
      nullsFirst[i] = keys.get(i).nullsFirst();
    }
    int n = limit;
    return (exec, table) -> {
      List<SortKey> k = new ArrayList<>();
      for (int i = 0; i < columns.length; i++) {
        k.add(new SortKey(columns[i], ascending[i], nullsFirst[i]));
      }
      return n < 0 ? TableOps.sort(exec, table, k) : TableOps.topN(exec, table, k, n);
    };
  }

  @Override
  boolean wholePartition() {
    return true;
  }

  @Override
  GpudfUnaryExec withChild(SparkPlan child) {
    return new GpudfSortExec(sortOrder, global, limit, child);
  }

  @Override
  Object[] arguments() {
    return new Object[] {sortOrder, global, limit};
  }
}
