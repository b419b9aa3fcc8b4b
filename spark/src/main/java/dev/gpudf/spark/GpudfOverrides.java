package dev.gpudf.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.internal.SQLConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rule that puts gpudf operators into a Spark physical plan, bottom up (after Spark placed its
 * sorts and shuffles: a replacement keeps the order of its rows that its parent may rely on —
 * filters, projections and joins keep their input's order; a partial aggregate's groups have none,
 * so a partial sort aggregate is replaced only under a shuffle): a scan of Parquet files becomes a
 * {@link GpudfParquetScanExec} (its rows in Spark's order); a filter, projection, partial
 * aggregate, sort or sort-merge join whose expressions and input columns gpudf takes ({@link
 * ExprTranslator}) becomes a {@link GpudfFilterExec}, {@link GpudfProjectExec}, {@link
 * GpudfHashAggregateExec}, {@link GpudfSortExec} or {@link GpudfHashJoinExec} (a broadcast hash join too), and an
 * ORDER BY ... LIMIT ({@code TakeOrderedAndProjectExec}) gets a {@link GpudfSortExec} top-N under
 * it that cuts each partition to its first rows; a shuffle of a gpudf operator's batches becomes a
 * {@link GpudfShuffleExchangeExec} (unless {@value #COLUMNAR_SHUFFLE} = false); every other operator stays
 * Spark's, and each one of those kinds that stays is logged with the reason ("will not run on
 * gpudf because ...").
 * {@value #ENABLED} = false turns it off for a session.
 */
final class GpudfOverrides extends Rule<SparkPlan> {
  /** Spark SQL configuration that turns the rule on (default) or off. */
  static final String ENABLED = "spark.gpudf.sql.enabled";
  /** Spark SQL configuration: shuffles of gpudf's batches as Arrow ({@link GpudfShuffleExchangeExec}, default) or Spark's rows. */
  static final String COLUMNAR_SHUFFLE = "spark.gpudf.sql.columnarShuffle";
  private static final Logger LOG = LoggerFactory.getLogger(GpudfOverrides.class);

  @Override
  public SparkPlan apply(SparkPlan plan) {
    if (!Boolean.parseBoolean(SQLConf.get().getConfString(ENABLED, "true"))) {
      return plan;
    }
    return replace(plan);
  }

  private SparkPlan replace(SparkPlan plan) {
    List<SparkPlan> children = GpudfUnaryExec.list(plan.children());
    List<SparkPlan> replaced = new ArrayList<>();
    boolean changed = false;
    for (SparkPlan c : children) {
      SparkPlan r = replace(c);
      changed |= r != c;
      replaced.add(r);
    }
    SparkPlan p = changed ? plan.withNewChildren(GpudfUnaryExec.seq(replaced)) : plan;
    try {
      if (p instanceof org.apache.spark.sql.execution.FileSourceScanExec s) {
        return GpudfParquetScanExec.of(s);
      }
      if (p instanceof FilterExec f) {
        columns(f.child().output());
        ExprTranslator.translate(f.condition(), GpudfUnaryExec.list(f.child().output()));
        return new GpudfFilterExec(f.condition(), f.child());
      }
      if (p instanceof ProjectExec pr) {
        columns(pr.child().output());
        List<Attribute> input = GpudfUnaryExec.list(pr.child().output());
        for (NamedExpression e : GpudfUnaryExec.list(pr.projectList())) {
          ExprTranslator.translate((org.apache.spark.sql.catalyst.expressions.Expression) e, input);
        }
        return new GpudfProjectExec(pr.projectList(), pr.child());
      }
      if (p instanceof org.apache.spark.sql.execution.joins.SortMergeJoinExec j) {
        columns(j.left().output());
        columns(j.right().output());
        // the sorts Spark put under the merge join stay: parents may rely on the order the join
        // keeps (its probe side's), as a sort aggregate on the join's keys does
        return GpudfHashJoinExec.of(j);
      }
      if (p instanceof org.apache.spark.sql.execution.joins.BroadcastHashJoinExec j) {
        columns(j.left().output());
        columns(j.right().output());
        return GpudfHashJoinExec.of(j);
      }
      if (p instanceof org.apache.spark.sql.execution.TakeOrderedAndProjectExec t
          && !(t.child() instanceof GpudfSortExec g && g.limit() >= 0)) {
        if (t.offset() != 0) {
          throw new ExprTranslator.Refused("an OFFSET of " + t.offset() + " rows");
        }
        columns(t.child().output());
        // the rows of every partition sorted on gpudf down to the first `limit` of each; Spark's node
        // then merges those few rows of each partition and projects them
        return t.withNewChildren(GpudfUnaryExec.seq(List.of(GpudfSortExec.topN(t.sortOrder(), t.limit(), t.child()))));
      }
      if (p instanceof org.apache.spark.sql.execution.SortExec s) {
        columns(s.child().output());
        return GpudfSortExec.of(s);
      }
      if (p instanceof org.apache.spark.sql.execution.aggregate.HashAggregateExec
          || p instanceof org.apache.spark.sql.execution.aggregate.ObjectHashAggregateExec) {
        columns(p.children().apply(0).output());
        return GpudfHashAggregateExec.of((org.apache.spark.sql.execution.aggregate.BaseAggregateExec) p, p);
      }
      if (p instanceof org.apache.spark.sql.execution.exchange.ShuffleExchangeExec x) {
        return exchange(x);
      }
    } catch (ExprTranslator.Refused why) {
      LOG.warn("{} will not run on gpudf because {}", p.nodeName(), why.getMessage());
    }
    return p;
  }

  /**
   * A shuffle: a partial sort aggregate under it on gpudf (the aggregate promises its parent rows
   * sorted by its keys, which gpudf's groups are not: it is taken only under a shuffle, which keeps
   * no order anyway), then the shuffle itself a {@link GpudfShuffleExchangeExec} where its input
   * is gpudf's.
   */
  private static SparkPlan exchange(org.apache.spark.sql.execution.exchange.ShuffleExchangeExec x) {
    if (x.child() instanceof org.apache.spark.sql.execution.aggregate.SortAggregateExec a) {
      try {
        columns(a.child().output());
        x = (org.apache.spark.sql.execution.exchange.ShuffleExchangeExec) x.withNewChildren(
            GpudfUnaryExec.seq(List.of(GpudfHashAggregateExec.of(a, a))));
      } catch (ExprTranslator.Refused why) {
        LOG.warn("{} will not run on gpudf because {}", a.nodeName(), why.getMessage());
        return x;
      }
    }
    if (!Boolean.parseBoolean(SQLConf.get().getConfString(COLUMNAR_SHUFFLE, "true"))) {
      return x;
    }
    try {
      return GpudfShuffleExchangeExec.of(x);
    } catch (ExprTranslator.Refused why) {
      LOG.warn("{} will not run on gpudf because {}", x.nodeName(), why.getMessage());
      return x;
    }
  }

  /** Refuses an input column of a type gpudf does not take (every column is converted to Arrow). */
  private static void columns(scala.collection.Seq<Attribute> output) {
    for (Attribute a : GpudfUnaryExec.list(output)) {
      try {
        ExprTranslator.type(a.dataType());
      } catch (ExprTranslator.Refused e) {
        throw new ExprTranslator.Refused("its input column " + a.name() + ": " + e.getMessage());
      }
    }
  }
}
