package dev.gpudf.sql;

import java.util.function.Function;
import org.apache.calcite.tools.RelBuilder;

/**
 * An aggregate of the {@link DataFrame} API, for {@link DataFrame.Grouped#agg}.
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

  public Agg as(String name) {
    return new Agg(build, name);
  }

  RelBuilder.AggCall call(RelBuilder b) {
    RelBuilder.AggCall c = build.apply(b);
    return alias == null ? c : c.as(alias);
  }
}
