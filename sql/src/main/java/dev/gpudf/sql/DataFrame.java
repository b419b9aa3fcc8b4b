package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.tools.RelBuilder;
import org.apache.calcite.tools.RelBuilderFactory;

/**
 * A lazy, immutable query built with Calcite's {@code RelBuilder}: it goes through the same
 * rewrites, planner and operators as SQL. Nothing runs until {@link #toArrow()}.
 * <pre>{@code
 * try (VectorSchemaRoot r = session.table("lineitem")
 *     .filter(col("l_shipdate").le(date("1998-09-02")))
 *     .groupBy("l_returnflag").agg(sum(col("l_quantity")).as("qty"), count().as("n"))
 *     .orderBy(col("l_returnflag")).toArrow()) { ... }
 * }</pre>
 */
public final class DataFrame {
  private final GpudfSession session;
  private final RelNode rel;

  DataFrame(GpudfSession session, RelNode rel) {
    this.session = session;
    this.rel = rel;
  }

  private RelBuilder builder() {
    RelBuilderFactory f = org.apache.calcite.rel.core.RelFactories.LOGICAL_BUILDER;
    return f.create(rel.getCluster(), null).push(rel);
  }

  private DataFrame with(RelBuilder b) {
    return new DataFrame(session, b.build());
  }

  /** Column names, in order. */
  public List<String> columns() {
    return rel.getRowType().getFieldNames();
  }

  public DataFrame filter(Col condition) {
    RelBuilder b = builder();
    return with(b.filter(condition.bare(b)));
  }

  public DataFrame select(Col... columns) {
    RelBuilder b = builder();
    List<RexNode> exprs = new ArrayList<>();
    for (Col c : columns) {
      exprs.add(c.rex(b));
    }
    return with(b.project(exprs));
  }

  /** Groups by the named columns; finish with {@link Grouped#agg}. */
  public Grouped groupBy(String... keys) {
    return new Grouped(keys);
  }

  /** The grouping step between {@link #groupBy} and {@link #agg}. */
  public final class Grouped {
    private final String[] keys;

    private Grouped(String[] keys) {
      this.keys = keys;
    }

    public DataFrame agg(Agg... aggs) {
      RelBuilder b = builder();
      List<RexNode> k = new ArrayList<>();
      for (String key : keys) {
        k.add(Col.col(key).bare(b));
      }
      List<RelBuilder.AggCall> calls = new ArrayList<>();
      for (Agg a : aggs) {
        calls.add(a.call(b));
      }
      return with(b.aggregate(b.groupKey(k), calls));
    }
  }

  /** An equi-join: {@code pairs} alternate a column of this frame and one of {@code right}. */
  public DataFrame join(DataFrame right, JoinRelType type, String... pairs) {
    if (pairs.length == 0 || pairs.length % 2 != 0) {
      throw new dev.gpudf.columnar.error.UserException("join takes pairs of left and right column names");
    }
    RelBuilder b = builder().push(right.rel);
    List<RexNode> conds = new ArrayList<>();
    for (int i = 0; i < pairs.length; i += 2) {
      conds.add(b.equals(field(b, 0, pairs[i]), field(b, 1, pairs[i + 1])));
    }
    return with(b.join(type, b.and(conds)));
  }

  private static RexNode field(RelBuilder b, int input, String name) {
    try {
      return b.field(2, input, name);
    } catch (IllegalArgumentException e) {
      throw new dev.gpudf.columnar.error.UserException("no column '" + name + "': " + e.getMessage(), e);
    }
  }

  /** Sorts by the keys ({@link Col#desc()} for descending; nulls as in SQL's default). */
  public DataFrame orderBy(Col... keys) {
    RelBuilder b = builder();
    List<RexNode> k = new ArrayList<>();
    for (Col c : keys) {
      k.add(c.descending() ? b.desc(c.bare(b)) : c.bare(b));
    }
    return with(b.sort(k));
  }

  /** This frame with column {@code name} added (or replaced) by {@code value}. */
  public DataFrame withColumn(String name, Col value) {
    RelBuilder b = builder();
    List<RexNode> exprs = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (String c : columns()) {
      if (!c.equals(name)) {
        exprs.add(b.field(c));
        names.add(c);
      }
    }
    exprs.add(value.bare(b));
    names.add(name);
    return with(b.project(exprs, names));
  }

  /** This frame with column {@code from} (which must exist) named {@code to}, in the same place. */
  public DataFrame withColumnRenamed(String from, String to) {
    RelBuilder b = builder();
    Col.col(from).bare(b);
    return with(b.rename(columns().stream().map(c -> c.equals(from) ? to : c).toList()));
  }

  /** This frame without the named columns (each must exist). */
  public DataFrame drop(String... names) {
    RelBuilder b = builder();
    List<String> gone = List.of(names);
    for (String n : names) {
      Col.col(n).bare(b);
    }
    List<RexNode> keep = new ArrayList<>();
    for (String c : columns()) {
      if (!gone.contains(c)) {
        keep.add(b.field(c));
      }
    }
    return with(b.project(keep));
  }

  /** Distinct rows. */
  public DataFrame distinct() {
    RelBuilder b = builder();
    return with(b.distinct());
  }

  /** The rows of this frame then those of {@code other} (UNION ALL), or distinct rows when {@code all} is false. */
  public DataFrame union(DataFrame other, boolean all) {
    RelBuilder b = builder().push(other.rel);
    return with(b.union(all));
  }

  public DataFrame limit(int n) {
    RelBuilder b = builder();
    return with(b.limit(0, n));
  }

  /** The physical plan, one operator a line. */
  public String explain() {
    return RelOptUtil.toString(session.optimize(rel));
  }

  /** The first {@code n} rows as aligned text. */
  public String format(int n) {
    try (VectorSchemaRoot r = limit(n).toArrow()) {
      return ResultText.format(r);
    }
  }

  /** Prints {@link #format(int)} to standard output. */
  public void show(int n) {
    System.out.print(format(n));
  }

  /** Runs the query; the caller closes the result (from the session's allocator). */
  public VectorSchemaRoot toArrow() {
    return session.execute(session.optimize(rel), List.of());
  }
}
