package dev.gpudf.spark;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Join;
import dev.gpudf.kernels.TableOps;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.optimizer.BuildRight$;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.RowToColumnarExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.joins.BroadcastHashJoinExec;
import org.apache.spark.sql.execution.joins.HashedRelation;
import org.apache.spark.sql.execution.joins.SortMergeJoinExec;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;

/**
 * A hash join on gpudf: the right side gathered into one table and indexed once on its keys, then
 * each left batch probes it ({@link Join}). Inner, left outer, left semi and left anti joins on
 * equal keys that are columns (NULL keys match nothing, as in Spark), with an optional residual
 * condition (NULL is false). Two kinds: Spark's {@code SortMergeJoinExec} as a join of each pair
 * of co-partitioned input partitions ({@code GpudfShuffledHashJoin}; the sorts under it stay,
 * unneeded), and Spark's {@code BroadcastHashJoinExec} ({@code GpudfBroadcastHashJoin}): Spark's
 * broadcast stays Spark's, and each task makes its table of the broadcast relation's rows (the
 * build side is small: Spark broadcasts what is). A broadcast of the left side is probed by the
 * right side's batches (inner and right outer joins) and the columns put back in Spark's order.
 */
public final class GpudfHashJoinExec extends GpudfExec {
  private final scala.collection.immutable.Seq<Expression> leftKeys;
  private final scala.collection.immutable.Seq<Expression> rightKeys;
  private final JoinType joinType;
  private final Option<Expression> condition;
  private final scala.collection.immutable.Seq<Attribute> output;
  private final SparkPlan left;
  private final SparkPlan right;
  // a constructor argument before the children, as Spark's copies pass arguments() then children
  private final Build build;

  public GpudfHashJoinExec(scala.collection.immutable.Seq<Expression> leftKeys,
      scala.collection.immutable.Seq<Expression> rightKeys, JoinType joinType, Option<Expression> condition,
      scala.collection.immutable.Seq<Attribute> output, Build build, SparkPlan left, SparkPlan right) {
    this.build = build;
    this.leftKeys = leftKeys;
    this.rightKeys = rightKeys;
    this.joinType = joinType;
    this.condition = condition;
    this.output = output;
    this.left = left;
    this.right = right;
  }

  /** {@code join} on gpudf, or a {@link ExprTranslator.Refused} saying why it stays on Spark. */
  static GpudfHashJoinExec of(SortMergeJoinExec join) {
    if (join.isSkewJoin()) {
      throw new ExprTranslator.Refused("a skew join");
    }
    check(join.joinType(), list(join.leftKeys()), list(join.rightKeys()), join.condition(), join.left(), join.right());
    return new GpudfHashJoinExec(join.leftKeys(), join.rightKeys(), join.joinType(), join.condition(), join.output(),
        Build.SHUFFLED, join.left(), join.right());
  }

  /** {@code join} on gpudf, or a {@link ExprTranslator.Refused} saying why it stays on Spark. */
  static GpudfHashJoinExec of(BroadcastHashJoinExec join) {
    if (join.isNullAwareAntiJoin()) {
      throw new ExprTranslator.Refused("a NOT IN join (NULL-aware)");
    }
    if (join.buildSide() == BuildRight$.MODULE$) {
      check(join.joinType(), list(join.leftKeys()), list(join.rightKeys()), join.condition(), join.left(), join.right());
    } else {
      // built on the left: the right side probes, as the left side of an inner or left outer join
      check(swapped(join.joinType()), list(join.rightKeys()), list(join.leftKeys()), join.condition(), join.right(),
          join.left());
    }
    return new GpudfHashJoinExec(join.leftKeys(), join.rightKeys(), join.joinType(), join.condition(), join.output(),
        join.buildSide() == BuildRight$.MODULE$ ? Build.BROADCAST_RIGHT : Build.BROADCAST_LEFT, join.left(), join.right());
  }

  /** Where the table that is indexed comes from. */
  enum Build {
    /** The right partition of each co-partitioned pair. */
    SHUFFLED,
    /** The right side's broadcast. */
    BROADCAST_RIGHT,
    /** The left side's broadcast, probed by the right side's batches (inner and right outer joins). */
    BROADCAST_LEFT
  }

  /** The join type seen from the right side, for a join built on its left: inner stays inner, right outer is left outer. */
  private static JoinType swapped(JoinType t) {
    if (t == Inner$.MODULE$) {
      return t;
    }
    if (t == org.apache.spark.sql.catalyst.plans.RightOuter$.MODULE$) {
      return LeftOuter$.MODULE$;
    }
    throw new ExprTranslator.Refused("a " + t.sql() + " broadcast join that builds on its left side");
  }

  private static void check(JoinType type, List<Expression> leftKeys, List<Expression> rightKeys, Option<Expression> condition,
      SparkPlan left, SparkPlan right) {
    kind(type);
    Shape shape = Shape.of(leftKeys, rightKeys, condition, list(left.output()), list(right.output()));
    if (shape.leftKeys().length == 0) {
      throw new ExprTranslator.Refused("a join without equal keys");
    }
  }

  private static Join.Kind kind(JoinType t) {
    if (t == Inner$.MODULE$) {
      return Join.Kind.INNER;
    }
    if (t == LeftOuter$.MODULE$) {
      return Join.Kind.LEFT;
    }
    if (t == LeftSemi$.MODULE$) {
      return Join.Kind.SEMI;
    }
    if (t == LeftAnti$.MODULE$) {
      return Join.Kind.ANTI;
    }
    throw new ExprTranslator.Refused(t.sql() + " joins are not run on gpudf");
  }

  /** The join's key columns on each side and its residual over the left columns then the right ones. */
  private record Shape(int[] leftKeys, int[] rightKeys, Expr residual) {
    static Shape of(List<Expression> leftKeys, List<Expression> rightKeys, Option<Expression> condition,
        List<Attribute> left, List<Attribute> right) {
      int[] lk = keys(leftKeys, left);
      int[] rk = keys(rightKeys, right);
      List<Attribute> both = new ArrayList<>(left);
      both.addAll(right);
      Expr residual = condition.isDefined() ? ExprTranslator.translate(condition.get(), both) : null;
      return new Shape(lk, rk, residual);
    }

    private static int[] keys(List<Expression> keys, List<Attribute> side) {
      int[] out = new int[keys.size()];
      for (int i = 0; i < out.length; i++) {
        Expression k = keys.get(i);
        if (k.dataType() instanceof org.apache.spark.sql.types.DoubleType) {
          // Spark joins -0.0 with 0.0 and NaN with NaN (it normalizes float keys); gpudf's hash does not promise that
          throw new ExprTranslator.Refused("a join on a floating-point key");
        }
        if (!(ExprTranslator.translate(k, side) instanceof Expr.Col c)) {
          throw new ExprTranslator.Refused("a join key that is not a column: " + k.sql());
        }
        out[i] = c.index();
      }
      return out;
    }
  }

  @Override
  Object[] arguments() {
    return new Object[] {leftKeys, rightKeys, joinType, condition, output, build};
  }

  @Override
  public Partitioning outputPartitioning() {
    // a broadcast join keeps its probe side's partitions; a shuffled one says nothing (Spark's default)
    return switch (build) {
      case BROADCAST_RIGHT -> left.outputPartitioning();
      case BROADCAST_LEFT -> right.outputPartitioning();
      case SHUFFLED -> super.outputPartitioning();
    };
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return output;
  }

  @Override
  public scala.collection.immutable.Seq<SparkPlan> children() {
    return seq(List.of(left, right));
  }

  @Override
  public SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> children) {
    return new GpudfHashJoinExec(leftKeys, rightKeys, joinType, condition, output, build, children.apply(0),
        children.apply(1));
  }

  @Override
  public String nodeName() {
    return build == Build.SHUFFLED ? "GpudfShuffledHashJoin" : "GpudfBroadcastHashJoin";
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    List<Expression> lk = list(leftKeys);
    List<Expression> rk = list(rightKeys);
    Option<Expression> cond = condition;
    List<Attribute> leftOut = list(left.output());
    List<Attribute> rightOut = list(right.output());
    StructType leftSchema = left.schema();
    StructType rightSchema = right.schema();
    // a join built on its left is run from its right side: a right outer join is a left outer one there
    Join.Kind kind = kind(build == Build.BROADCAST_LEFT ? swapped(joinType) : joinType);
    String name = nodeName();
    int batchRows = batchRows();
    OpMetrics m = opMetrics();
    if (build == Build.BROADCAST_RIGHT) {
      Broadcast<HashedRelation> relation = broadcastOf(right);
      return left.executeColumnar().toJavaRDD().mapPartitions(probe -> join(probe,
          exec -> rows(relation.value(), rightSchema, exec), lk, rk, cond, leftOut, rightOut, leftSchema, kind, null, name, batchRows,
          m)).rdd();
    }
    if (build == Build.BROADCAST_LEFT) {
      Broadcast<HashedRelation> relation = broadcastOf(left);
      StructType leftRows = left.schema();
      // the join's columns come out right then left: put back in Spark's order, left then right
      int[] order = new int[leftOut.size() + rightOut.size()];
      for (int i = 0; i < order.length; i++) {
        order[i] = i < leftOut.size() ? rightOut.size() + i : i - leftOut.size();
      }
      return right.executeColumnar().toJavaRDD().mapPartitions(probe -> join(probe,
          exec -> rows(relation.value(), leftRows, exec), rk, lk, cond, rightOut, leftOut, rightSchema, kind, order,
          name, batchRows, m)).rdd();
    }
    return left.executeColumnar().toJavaRDD().zipPartitions(right.executeColumnar().toJavaRDD(), (probe, build) ->
        join(probe, exec -> gather(build, rightSchema, exec, m), lk, rk, cond, leftOut, rightOut, leftSchema, kind, null,
            name, batchRows, m))
        .rdd();
  }

  /** The broadcast of {@code side}: the transition rule reads every child of a columnar node as batches, so one it put above the exchange is skipped. */
  private static Broadcast<HashedRelation> broadcastOf(SparkPlan side) {
    return (side instanceof RowToColumnarExec r ? r.child() : side).executeBroadcast();
  }

  /**
   * The rows of a broadcast relation as one table: each of its keys once (a relation of several
   * key columns names a key once per row under it), then the rows under it (Spark keeps no row
   * whose key is NULL, and those match nothing).
   */
  private static HostTable rows(HashedRelation relation, StructType schema, Exec exec) {
    HashedRelation r = relation.asReadOnlyCopy();
    java.util.Set<org.apache.spark.sql.catalyst.InternalRow> seen = new java.util.HashSet<>();
    scala.collection.Iterator<org.apache.spark.sql.catalyst.InternalRow> rows = r.keys().filter(k -> seen.add(k.copy()))
        .flatMap(k -> {
          scala.collection.Iterator<org.apache.spark.sql.catalyst.InternalRow> under = r.get(k);
          return under == null ? scala.collection.Iterator$.MODULE$.empty() : under;
        });
    return SparkArrow.rows(scala.jdk.javaapi.CollectionConverters.asJava(rows), schema, exec.allocator());
  }

  /** {@code t}'s columns in {@code order} (the columns move, nothing is copied); {@code t} is closed. */
  private static Table<?> reordered(Exec exec, Table<?> t, int[] order) {
    try (t) {
      List<String> names = new ArrayList<>();
      List<Column> columns = new ArrayList<>();
      for (int i = 0; i < order.length; i++) {
        names.add("c" + i);
        Column c = t.column(order[i]);
        c.retain();
        columns.add(c);
      }
      return TableOps.table(exec, t, names, columns, t.rowCount());
    }
  }

  /**
   * One task's join: the table {@code build} makes (closed with the task) put on the task's backend
   * (indexed once on the CPU; the GPU's join builds its hash table per probe batch), then probed
   * by each batch of {@code probe}; the result's columns put in {@code order} when it is not null.
   * Where the device has no memory, the join runs on the CPU as on the CPU backend: the whole task
   * when the build side does not fit, else each probe batch that does not, against one host copy
   * of the build side (made and indexed at the first such batch).
   */
  private static java.util.Iterator<ColumnarBatch> join(java.util.Iterator<ColumnarBatch> probe,
      java.util.function.Function<Exec, HostTable> build, List<Expression> lk, List<Expression> rk, Option<Expression> cond,
      List<Attribute> leftOut, List<Attribute> rightOut, StructType leftSchema, Join.Kind kind, int[] order, String name,
      int batchRows, OpMetrics metrics) {
    Shape shape = Shape.of(lk, rk, cond, leftOut, rightOut);
    Exec task = taskExec(name);
    Exec exec = task;
    Table<?> table = null;
    try {
      try (HostTable rows = build.apply(task)) {
        table = GpudfBackend.get().inTurn(() -> placed(task, rows, metrics));
      }
      if (table instanceof HostTable && task.hasGpu()) {
        // the build side stays on the host: the task's join runs on the CPU, its device context closed with it
        exec = Exec.onCpu(task.allocator());
      }
    } catch (RuntimeException e) {
      try (org.apache.arrow.memory.BufferAllocator a = task.allocator(); Exec x = task; Table<?> t = table) {
        throw e;
      }
    }
    Table<?> built = table;
    HostSide host = new HostSide(built, shape.rightKeys(), task, task != exec, metrics);
    int width = leftOut.size() + (kind == Join.Kind.SEMI || kind == Join.Kind.ANTI ? 0 : rightOut.size());
    List<String> names = new ArrayList<>();
    for (int i = 0; i < width; i++) {
      names.add("c" + i);
    }
    Operation join = (e, batch) -> e.hasGpu()
        ? TableOps.join(e, batch, built, shape.leftKeys(), shape.rightKeys(), kind, names, shape.residual())
        : Join.join(e, (HostTable) batch, host.table(e), shape.leftKeys(), shape.rightKeys(), kind, names,
            shape.residual(), host.index());
    Operation op = order == null ? join : (e, batch) -> reordered(e, join.apply(e, batch), order);
    BatchIterator out = new BatchIterator(probe, leftSchema, op, exec, host, batchRows, true, metrics);
    TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
    return out;
  }

  /** {@code rows} on {@code exec}'s backend, or (retained) on the host where the device has no memory for them. */
  private static Table<?> placed(Exec exec, HostTable rows, OpMetrics metrics) {
    try {
      return onBackend(exec, rows, metrics);
    } catch (dev.gpudf.columnar.error.GpuOutOfMemoryException e) {
      if (!exec.hasGpu()) {
        throw e;
      }
      LOG.warn("a join's build side of {} rows stays on the host, and its task joins on the CPU: {}", rows.rowCount(),
          e.getMessage());
      GpudfBackend.get().ranOnHost();
      rows.retain();
      return rows;
    }
  }

  /**
   * A task's build side and what the CPU's join needs of it: the side itself when on the host, else
   * a host copy made at the first batch that joins on the CPU; its hash index, made once. Closing
   * closes the copy, the side, and the device context the task left for the CPU, if any.
   */
  private static final class HostSide implements AutoCloseable {
    private final Table<?> built;
    private final int[] keys;
    private final Exec task;
    private final boolean closeTask;
    private final OpMetrics metrics;
    private HostTable copy;
    private Join.Index index;

    HostSide(Table<?> built, int[] keys, Exec task, boolean closeTask, OpMetrics metrics) {
      this.metrics = metrics;
      this.built = built;
      this.keys = keys;
      this.task = task;
      this.closeTask = closeTask;
    }

    /** The build side on the host; a device one copied down on the task's stream, after the upload queued there. */
    HostTable table(Exec e) {
      if (built instanceof HostTable h) {
        return h;
      }
      if (copy == null) {
        copy = ((dev.gpudf.columnar.DeviceTable) built).toHost(e.allocator(), task.stream());
        metrics.copiedToHost(bytes(copy));
      }
      return copy;
    }

    /** The build side's index, made at the first call (after {@link #table}). */
    Join.Index index() {
      if (index == null) {
        index = Join.index(copy != null ? copy : (HostTable) built, keys);
      }
      return index;
    }

    @Override
    public void close() {
      try (Exec x = closeTask ? task : null; Table<?> b = built; HostTable c = copy) {
        // the copy, the side, then the device context the task left for the CPU
      }
    }
  }
}
