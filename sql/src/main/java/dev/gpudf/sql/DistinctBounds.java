package dev.gpudf.sql;

import java.util.Map;
import java.util.TreeMap;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.logical.LogicalAggregate;
import org.apache.calcite.rel.logical.LogicalFilter;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.logical.LogicalSort;
import org.apache.calcite.rel.logical.LogicalUnion;
import org.apache.calcite.rel.logical.LogicalValues;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.util.ImmutableBitSet;

/**
 * Upper bounds of the distinct values (NULL one of them) of a logical plan's columns, for deciding
 * whether an aggregate's groups could be many ({@link JoinPartitioning#chooseGroups}). Bounds, not
 * estimates. A column's values come from sources, each with a bound:
 * <ul>
 *   <li>a table's column, at most the table's rows, and for an integer or date column whose files
 *   give its range, the values in it ({@link CatalogTable#distinctBound}): every chunk's scan of
 *   the table names the same source, so a union of chunk branches counts it once;
 *   <li>a deterministic expression of columns, at most the combinations of their values (TPC-H q9's
 *   {@code EXTRACT(YEAR FROM o_orderdate)} as many as the order dates, 2,406), named by the
 *   expression and its columns' sources, so that the same expression in every branch is one source;
 *   <li>NULL, where an outer join pads or grouping sets roll up.
 * </ul>
 * A filter, a join or a sort passes its input's sources on; a union has its inputs' together; a
 * column's bound is the sum of its sources'. Unknown (null) for an aggregate's computed values, a
 * non-deterministic expression or an operator not listed.
 */
final class DistinctBounds {
  /** Source name to bound, for one column; null where unknown. */
  private final ColumnMemo<Map<String, Double>> sources = new ColumnMemo<>();
  /**
   * A number for each VALUES node met, naming it as a source: identity hash codes can repeat, and
   * two sources counted as one would bound too low.
   */
  private final Map<RelNode, Integer> values = new java.util.IdentityHashMap<>();

  /** The bound of column {@code column} of {@code node}, or null where none is known. */
  Double of(RelNode node, int column) {
    Map<String, Double> s = sources.get(node, column, this::find);
    return s == null ? null : sum(s);
  }

  /** The bound of the combinations of {@code columns} of {@code node}: the product of theirs, or null. */
  Double of(RelNode node, ImmutableBitSet columns) {
    double product = 1;
    for (int c : columns) {
      Double b = of(node, c);
      if (b == null) {
        return null;
      }
      product *= b;
    }
    return product;
  }

  private static double sum(Map<String, Double> sources) {
    return sources.values().stream().mapToDouble(Double::doubleValue).sum();
  }

  private Map<String, Double> find(RelNode node, int column) {
    if (node instanceof TableScan scan) {
      CatalogTable t = scan.getTable().unwrap(CatalogTable.class);
      return t == null ? null : Map.of(t.columnName(column), t.distinctBound(column));
    }
    if (node instanceof LogicalFilter || node instanceof LogicalSort) {
      return sources.get(node.getInput(0), column, this::find);
    }
    if (node instanceof LogicalProject p) {
      RexNode e = p.getProjects().get(column);
      return e instanceof RexInputRef r ? sources.get(p.getInput(), r.getIndex(), this::find)
          : RexUtil.isDeterministic(e) ? expression(p.getInput(), e) : null;
    }
    if (node instanceof LogicalJoin j) {
      int n = j.getLeft().getRowType().getFieldCount();
      JoinRelType type = j.getJoinType();
      return column < n
          ? padded(sources.get(j.getLeft(), column, this::find), type == JoinRelType.RIGHT || type == JoinRelType.FULL)
          : padded(sources.get(j.getRight(), column - n, this::find), type == JoinRelType.LEFT || type == JoinRelType.FULL);
    }
    if (node instanceof LogicalAggregate a) {
      // a key that grouping sets roll up is NULL in the rolled-up rows
      return column < a.getGroupCount() ? padded(sources.get(a.getInput(), a.getGroupSet().nth(column), this::find),
          a.getGroupType() != Aggregate.Group.SIMPLE) : null;
    }
    if (node instanceof LogicalUnion u) {
      Map<String, Double> all = new TreeMap<>();
      for (RelNode in : u.getInputs()) {
        Map<String, Double> s = sources.get(in, column, this::find);
        if (s == null) {
          return null;
        }
        all.putAll(s);
      }
      return all;
    }
    if (node instanceof LogicalValues v) {
      int id = values.computeIfAbsent(v, n -> values.size());
      return Map.of("values " + id + "." + column, (double) v.getTuples().size());
    }
    return null;
  }

  /** {@code e} over {@code input}'s columns: one source, named by it and theirs, of at most their combinations. */
  private Map<String, Double> expression(RelNode input, RexNode e) {
    StringBuilder name = new StringBuilder(e.toString());
    double bound = 1;
    for (int c : RelOptUtil.InputFinder.bits(e)) {
      Map<String, Double> s = sources.get(input, c, this::find);
      if (s == null) {
        return null;
      }
      name.append(" $").append(c).append('=').append(s.keySet());
      bound *= sum(s);
    }
    return Map.of(name.toString(), bound);
  }

  private static Map<String, Double> padded(Map<String, Double> sources, boolean padded) {
    if (sources == null || !padded) {
      return sources;
    }
    Map<String, Double> withNull = new TreeMap<>(sources);
    withNull.put("NULL", 1.0);
    return withNull;
  }
}
