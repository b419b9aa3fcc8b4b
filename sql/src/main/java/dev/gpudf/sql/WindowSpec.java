package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexWindowBound;
import org.apache.calcite.rex.RexWindowBounds;
import org.apache.calcite.tools.RelBuilder;

/**
 * A window of the {@link DataFrame} API, for {@link Agg#over}: partition columns, order columns
 * ({@link Col#desc()} for descending; NULLs last ascending, first descending, as in SQL) and a
 * frame. Bounds count rows from the current one: negative before it, positive after it,
 * {@link #UNBOUNDED_PRECEDING}, {@link #CURRENT_ROW}, {@link #UNBOUNDED_FOLLOWING}. Without a
 * frame, SQL's default applies: the whole partition, or up to the current row's last peer when
 * ordered.
 * <pre>{@code
 * WindowSpec w = WindowSpec.partitionBy(col("i_category")).orderBy(col("revenue").desc());
 * sales.withColumn("rank", Agg.rank().over(w))
 * }</pre>
 */
public final class WindowSpec {
  public static final long UNBOUNDED_PRECEDING = Long.MIN_VALUE;
  public static final long CURRENT_ROW = 0;
  public static final long UNBOUNDED_FOLLOWING = Long.MAX_VALUE;

  private final List<Col> partition;
  private final List<Col> order;
  private final Boolean rows;
  private final long lower;
  private final long upper;

  private WindowSpec(List<Col> partition, List<Col> order, Boolean rows, long lower, long upper) {
    this.partition = partition;
    this.order = order;
    this.rows = rows;
    this.lower = lower;
    this.upper = upper;
  }

  /** A window over partitions of equal {@code columns}. */
  public static WindowSpec partitionBy(Col... columns) {
    return new WindowSpec(List.of(columns), List.of(), null, 0, 0);
  }

  /** A window over all rows, ordered by {@code columns}. */
  public static WindowSpec orderedBy(Col... columns) {
    return new WindowSpec(List.of(), List.of(columns), null, 0, 0);
  }

  /** This window with its rows ordered by {@code columns}. */
  public WindowSpec orderBy(Col... columns) {
    return new WindowSpec(partition, List.of(columns), rows, lower, upper);
  }

  /** This window with a ROWS frame from {@code lower} to {@code upper} rows from the current one. */
  public WindowSpec rowsBetween(long lower, long upper) {
    return new WindowSpec(partition, order, true, lower, upper);
  }

  /** This window with a RANGE frame ({@link #UNBOUNDED_PRECEDING}, {@link #CURRENT_ROW} or {@link #UNBOUNDED_FOLLOWING}). */
  public WindowSpec rangeBetween(long lower, long upper) {
    return new WindowSpec(partition, order, false, lower, upper);
  }

  /** {@code call} over this window. */
  RexNode over(RelBuilder b, RelBuilder.AggCall call) {
    List<RexNode> keys = new ArrayList<>();
    partition.forEach(c -> keys.add(c.bare(b)));
    List<RexNode> sort = new ArrayList<>();
    order.forEach(c -> sort.add(c.descending() ? b.desc(c.bare(b)) : c.bare(b)));
    RelBuilder.OverCall over = call.over().partitionBy(keys).orderBy(sort);
    if (rows != null) {
      over = rows ? over.rowsBetween(bound(b, lower), bound(b, upper)) : over.rangeBetween(bound(b, lower), bound(b, upper));
    }
    return over.toRex();
  }

  private static RexWindowBound bound(RelBuilder b, long at) {
    if (at == UNBOUNDED_PRECEDING) {
      return RexWindowBounds.UNBOUNDED_PRECEDING;
    }
    if (at == UNBOUNDED_FOLLOWING) {
      return RexWindowBounds.UNBOUNDED_FOLLOWING;
    }
    if (at == CURRENT_ROW) {
      return RexWindowBounds.CURRENT_ROW;
    }
    return at < 0 ? RexWindowBounds.preceding(b.literal(-at)) : RexWindowBounds.following(b.literal(at));
  }
}
