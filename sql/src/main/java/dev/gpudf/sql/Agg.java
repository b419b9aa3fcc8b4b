package dev.gpudf.sql;

import java.util.function.Function;
import org.apache.calcite.tools.RelBuilder;

/**
 * An aggregate of the {@link DataFrame} API, for {@link DataFrame.Grouped#agg}, or, with
 * {@link #over}, a window function ({@link #rank}, {@link #lag}, {@code sum(c).over(w)}, ...).
 * <pre>{@code
 * orders.groupBy("o_orderstatus").agg(sum(col("o_totalprice")).as("total"), count().as("n"))
 * }</pre>
 */
public final class Agg {
  private final Function<RelBuilder, RelBuilder.AggCall> build;
  private final String alias;

  private Agg(Function<RelBuilder, RelBuilder.AggCall> build, String alias) {
    this.build = build;
    this.alias = alias;
  }

  public static Agg sum(Col c) {
    return new Agg(b -> b.sum(c.bare(b)), null);
  }

  public static Agg avg(Col c) {
    return new Agg(b -> b.avg(c.bare(b)), null);
  }

  public static Agg min(Col c) {
    return new Agg(b -> b.min(c.bare(b)), null);
  }

  public static Agg max(Col c) {
    return new Agg(b -> b.max(c.bare(b)), null);
  }

  /** COUNT(*). */
  public static Agg count() {
    return new Agg(b -> b.countStar(null), null);
  }

  public static Agg countDistinct(Col c) {
    return new Agg(b -> b.count(true, null, c.bare(b)), null);
  }

  /** ROW_NUMBER(), for {@link #over}. */
  public static Agg rowNumber() {
    return ranking(org.apache.calcite.sql.fun.SqlStdOperatorTable.ROW_NUMBER);
  }

  /** RANK(), for {@link #over}. */
  public static Agg rank() {
    return ranking(org.apache.calcite.sql.fun.SqlStdOperatorTable.RANK);
  }

  /** DENSE_RANK(), for {@link #over}. */
  public static Agg denseRank() {
    return ranking(org.apache.calcite.sql.fun.SqlStdOperatorTable.DENSE_RANK);
  }

  /** PERCENT_RANK(), for {@link #over}. */
  public static Agg percentRank() {
    return ranking(org.apache.calcite.sql.fun.SqlStdOperatorTable.PERCENT_RANK);
  }

  /** CUME_DIST(), for {@link #over}. */
  public static Agg cumeDist() {
    return ranking(org.apache.calcite.sql.fun.SqlStdOperatorTable.CUME_DIST);
  }

  /** NTILE(buckets), for {@link #over}. */
  public static Agg ntile(int buckets) {
    return new Agg(b -> b.aggregateCall(org.apache.calcite.sql.fun.SqlStdOperatorTable.NTILE, b.literal(buckets)), null);
  }

  /** LAG(c, offset): the value {@code offset} rows before, within the partition; for {@link #over}. */
  public static Agg lag(Col c, int offset) {
    return new Agg(b -> b.aggregateCall(org.apache.calcite.sql.fun.SqlStdOperatorTable.LAG, c.bare(b), b.literal(offset)), null);
  }

  /** LEAD(c, offset): the value {@code offset} rows after, within the partition; for {@link #over}. */
  public static Agg lead(Col c, int offset) {
    return new Agg(b -> b.aggregateCall(org.apache.calcite.sql.fun.SqlStdOperatorTable.LEAD, c.bare(b), b.literal(offset)), null);
  }

  /** FIRST_VALUE(c) of the frame, for {@link #over}. */
  public static Agg firstValue(Col c) {
    return new Agg(b -> b.aggregateCall(org.apache.calcite.sql.fun.SqlStdOperatorTable.FIRST_VALUE, c.bare(b)), null);
  }

  /** LAST_VALUE(c) of the frame, for {@link #over}. */
  public static Agg lastValue(Col c) {
    return new Agg(b -> b.aggregateCall(org.apache.calcite.sql.fun.SqlStdOperatorTable.LAST_VALUE, c.bare(b)), null);
  }

  private static Agg ranking(org.apache.calcite.sql.SqlAggFunction op) {
    return new Agg(b -> b.aggregateCall(op), null);
  }

  /** This aggregate or ranking over {@code window}: a column for {@link DataFrame#withColumn} or {@link DataFrame#select}. */
  public Col over(WindowSpec window) {
    return Col.of(b -> window.over(b, build.apply(b)), alias);
  }

  public Agg as(String name) {
    return new Agg(build, name);
  }

  RelBuilder.AggCall call(RelBuilder b) {
    RelBuilder.AggCall c = build.apply(b);
    return alias == null ? c : c.as(alias);
  }
}
