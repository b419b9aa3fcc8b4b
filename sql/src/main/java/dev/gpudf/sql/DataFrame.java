package dev.gpudf.sql;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.Table;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
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
  private final GpuSession session;
  private final RelNode rel;

  DataFrame(GpuSession session, RelNode rel) {
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

  /**
   * The grouping step between {@link #groupBy} and {@link #agg}: {@code df.groupBy("k").agg(count())};
   * {@code df.groupBy().agg(...)} aggregates all rows into one.
   */
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

  /**
   * This frame joined with {@code right} on {@code condition}, whose columns name either side
   * (a name on both sides is refused: rename one first with {@link #withColumnRenamed}). Equality
   * conditions become hash-join keys; the result has this frame's columns, then {@code right}'s
   * (none of {@code right}'s for SEMI and ANTI).
   * <pre>{@code
   * orders.join(customer, col("o_custkey").eq(col("c_custkey")), JoinRelType.INNER)
   * }</pre>
   */
  public DataFrame join(DataFrame right, Col condition, JoinRelType type) {
    if (right.session != session) {
      throw new dev.gpudf.columnar.error.UserException("cannot join frames of two sessions");
    }
    RelBuilder b = builder().push(right.rel);
    return with(b.join(type, condition.bare(b)));
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
    return PlanText.of(session.optimize(rel));
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

  /** The columns' names and Arrow types, without running anything. */
  public Schema schema() {
    return new Schema(rel.getRowType().getFieldList().stream()
        .map(f -> ArrowTypes.toArrowField(f.getName(), SqlTypes.fromCalcite(f.getType()))).toList());
  }

  /** Runs the query; the caller closes the result (from the session's allocator). */
  public VectorSchemaRoot toArrow() {
    return session.execute(session.optimize(rel), List.of());
  }

  /** Runs the query and copies the result into vectors from {@code allocator}; the caller closes them. */
  public VectorSchemaRoot toArrow(BufferAllocator allocator) {
    try (Table<?> t = collect()) {
      return t.toArrow(allocator);
    }
  }

  /**
   * Runs the query and keeps the result where it was computed: a {@code DeviceTable} in GPU
   * memory on a GPU session (a {@code HostTable} on a CPU one). The caller closes it.
   */
  public Table<?> collect() {
    return session.collect(session.optimize(rel));
  }

  /**
   * A frame over a copy of {@code rows} in {@code session} (on the device for a GPU session),
   * kept until the session closes; the caller keeps {@code rows}.
   */
  public static DataFrame fromArrow(GpuSession session, VectorSchemaRoot rows) {
    return session.frameOf(rows);
  }
}
