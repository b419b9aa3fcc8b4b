package dev.gpudf.spark;

import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.SortKey;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

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
  public RDD<ColumnarBatch> doExecuteColumnar() {
    List<Attribute> input = list(child().output());
    StructType schema = child().schema();
    Operation op = operation(input);
    String name = nodeName();
    OpMetrics m = opMetrics();
    return child().executeColumnar().toJavaRDD().mapPartitions(batches -> {
      Exec exec = taskExec(name);
      HostTable all;
      try {
        all = gather(batches, schema, exec, m);
      } catch (RuntimeException e) {
        try (org.apache.arrow.memory.BufferAllocator a = exec.allocator(); Exec x = exec) {
          throw e;
        }
      }
      // the whole partition is one input: sorted once, sent as one batch
      Once once = new Once(all);
      BatchIterator out = new BatchIterator(once, op, exec, once, true, m);
      TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
      return out;
    }).rdd();
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

  @Override
  GpudfUnaryExec withChild(SparkPlan child) {
    return new GpudfSortExec(sortOrder, global, limit, child);
  }

  @Override
  Object[] arguments() {
    return new Object[] {sortOrder, global, limit};
  }
}
