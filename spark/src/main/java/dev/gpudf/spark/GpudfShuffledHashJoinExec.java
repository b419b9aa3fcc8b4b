package dev.gpudf.spark;

import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Join;
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
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.joins.SortMergeJoinExec;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;

/**
 * Spark's {@code SortMergeJoinExec} on gpudf as a hash join of each pair of co-partitioned input
 * partitions: the right partition's batches are gathered into one table and indexed once on their
 * keys, then each left batch probes it ({@link Join}). Inner, left outer, left semi and left anti
 * joins on equal keys that are columns (NULL keys match nothing, as in Spark), with an optional
 * residual condition (NULL is false). The sorts under the join stay, unneeded.
 */
public final class GpudfShuffledHashJoinExec extends GpudfExec {
  private final scala.collection.immutable.Seq<Expression> leftKeys;
  private final scala.collection.immutable.Seq<Expression> rightKeys;
  private final JoinType joinType;
  private final Option<Expression> condition;
  private final scala.collection.immutable.Seq<Attribute> output;
  private final SparkPlan left;
  private final SparkPlan right;

  public GpudfShuffledHashJoinExec(scala.collection.immutable.Seq<Expression> leftKeys,
      scala.collection.immutable.Seq<Expression> rightKeys, JoinType joinType, Option<Expression> condition,
      scala.collection.immutable.Seq<Attribute> output, SparkPlan left, SparkPlan right) {
    this.leftKeys = leftKeys;
    this.rightKeys = rightKeys;
    this.joinType = joinType;
    this.condition = condition;
    this.output = output;
    this.left = left;
    this.right = right;
  }

  /** {@code join} on gpudf, or a {@link ExprTranslator.Refused} saying why it stays on Spark. */
  static GpudfShuffledHashJoinExec of(SortMergeJoinExec join) {
    kind(join.joinType());
    if (join.isSkewJoin()) {
      throw new ExprTranslator.Refused("a skew join");
    }
    Shape shape = Shape.of(list(join.leftKeys()), list(join.rightKeys()), join.condition(), list(join.left().output()),
        list(join.right().output()));
    if (shape.leftKeys().length == 0) {
      throw new ExprTranslator.Refused("a join without equal keys");
    }
    return new GpudfShuffledHashJoinExec(join.leftKeys(), join.rightKeys(), join.joinType(), join.condition(),
        join.output(), join.left(), join.right());
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
    return new Object[] {leftKeys, rightKeys, joinType, condition, output};
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
    return new GpudfShuffledHashJoinExec(leftKeys, rightKeys, joinType, condition, output, children.apply(0),
        children.apply(1));
  }

  @Override
  public String nodeName() {
    return "GpudfShuffledHashJoin";
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
    Join.Kind kind = kind(joinType);
    String name = nodeName();
    return left.executeColumnar().toJavaRDD().zipPartitions(right.executeColumnar().toJavaRDD(), (probe, build) -> {
      Shape shape = Shape.of(lk, rk, cond, leftOut, rightOut);
      Exec exec = taskExec(name);
      HostTable table = null;
      Join.Index index;
      try {
        table = gather(build, rightSchema, exec);
        index = Join.index(table, shape.rightKeys());
      } catch (RuntimeException e) {
        try (org.apache.arrow.memory.BufferAllocator a = exec.allocator(); Exec x = exec; HostTable t = table) {
          throw e;
        }
      }
      HostTable built = table;
      int width = leftOut.size() + (kind == Join.Kind.SEMI || kind == Join.Kind.ANTI ? 0 : rightOut.size());
      List<String> names = new ArrayList<>();
      for (int i = 0; i < width; i++) {
        names.add("c" + i);
      }
      Operation op = (e, batch) -> Join.join(e, batch, built, shape.leftKeys(), shape.rightKeys(), kind, names,
          shape.residual(), index);
      BatchIterator out = new BatchIterator(probe, leftSchema, op, exec, built);
      TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
      return out;
    }).rdd();
  }
}
