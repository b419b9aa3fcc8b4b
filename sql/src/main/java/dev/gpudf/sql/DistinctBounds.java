package dev.gpudf.sql;

import java.util.List;
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
 * estimates, but for one: the rows of a table that its scans' filters keep ({@link
 * ChunkSplit#chunkRowsPassing}). A column's values come from sources, each with a bound:
 * <ul>
 *   <li>a table's column, at most the table's rows, and for an integer or date column whose files
 *   give its range, the values in it ({@link CatalogTable#distinctBound}): every chunk's scan of
 *   the table names the same source, so a union of chunk branches counts it once;
 *   <li>a deterministic expression of columns, at most the combinations of their values (TPC-H q9's
 *   {@code EXTRACT(YEAR FROM o_orderdate)} as many as the order dates, 2,406), named by the
 *   expression and its columns' sources, so that the same expression in every branch is one source;
 *   <li>NULL, where an outer join pads or grouping sets roll up.
 * </ul>
 * A filter, a join or a sort passes its input's sources on, but an inner or semi join's key column
 * has the other side's key's sources where theirs bound it lower (its values are among those); a
 * union has its inputs' together; a column's bound is the sum of its sources'. Unknown (null) for an
 * aggregate's computed values, a non-deterministic expression or an operator not listed.
 * Combinations of columns are at most the product of their bounds, and those of columns whose one
 * source is a column of one table at most the rows of it that reach them, where no join below has
 * the table on both sides: each row takes them from one of its rows (TPC-H q3's order key, date and
 * priority, however many dates there are).
 */
final class DistinctBounds {
  /** Source name to bound, for one column; null where unknown. */
  private final ColumnMemo<Map<String, Double>> sources = new ColumnMemo<>();
  /**
   * A number for each VALUES node met, naming it as a source: identity hash codes can repeat, and
   * two sources counted as one would bound too low.
   */
  private final Map<RelNode, Integer> values = new java.util.IdentityHashMap<>();
  /** The table of each source that is a table's column. */
  private final Map<String, String> tableOf = new java.util.HashMap<>();
  /** Per node, the rows of each table reaching it; per grouped aggregate, its rows ({@link #groups}). */
  private final Map<RelNode, TableRows> tableRows = new java.util.IdentityHashMap<>();
  private final Map<RelNode, Double> groups = new java.util.IdentityHashMap<>();

  private final Map<RelNode, Double> passing = new java.util.IdentityHashMap<>();

  /** The share of chunk {@code c}'s rows that {@code filter} over its scan passes ({@link ChunkPruning#passing}). */
  double passing(LogicalFilter filter, CatalogTable c) {
    return passing.computeIfAbsent(filter, f -> c.ranges() == null ? 1.0
        : ChunkPruning.passing(filter.getCondition(), c.ranges(), filter.getCluster().getRexBuilder()));
  }

  /**
   * The rows a grouped aggregate keeps at most: its input's that reach it ({@link
   * ChunkSplit#chunkRowsPassing}) and its keys' combinations.
   */
  double groups(LogicalAggregate a) {
    Double known = groups.get(a);
    if (known == null) {
      double in = ChunkSplit.chunkRowsPassing(a.getInput(), this);
      Double keys = of(a.getInput(), a.getGroupSet());
      known = keys == null ? in : Math.min(in, keys);
      groups.put(a, known);
    }
    return known;
  }

  /** The bound of column {@code column} of {@code node}, or null where none is known. */
  Double of(RelNode node, int column) {
    Map<String, Double> s = sources.get(node, column, this::find);
    return s == null ? null : sum(s);
  }

  /**
   * The bound of the combinations of {@code columns} of {@code node}: the product of theirs, those
   * of one table's columns at most its rows that reach {@code node}; or null.
   */
  Double of(RelNode node, ImmutableBitSet columns) {
    double product = 1;
    Map<String, Double> perTable = new TreeMap<>();
    for (int c : columns) {
      Map<String, Double> s = sources.get(node, c, this::find);
      if (s == null) {
        return null;
      }
      String table = s.size() == 1 ? tableOf.get(s.keySet().iterator().next()) : null;
      if (table != null) {
        perTable.merge(table, sum(s), (x, y) -> x * y);
      } else {
        product *= sum(s);
      }
    }
    if (!perTable.isEmpty()) {
      TableRows rows = tableRows.computeIfAbsent(node, n -> new TableRows(n));
      for (Map.Entry<String, Double> t : perTable.entrySet()) {
        product *= Math.min(t.getValue(), rows.of(t.getKey()));
      }
    }
    return product;
  }

  /**
   * Per table, the rows of it that reach a node: its chunk scans' rows each counted once, at the
   * share their filters keep ({@link ChunkPruning#passing}), a whole table's rows; infinite for a
   * table that a join below has on both sides, whose rows pair up.
   */
  private final class TableRows {
    private final Map<String, Double> rows = new java.util.HashMap<>();
    private final java.util.Set<String> paired;

    TableRows(RelNode node) {
      paired = tables(node).paired();
      java.util.Set<RelNode> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
      new org.apache.calcite.rel.RelVisitor() {
        @Override
        public void visit(RelNode n, int ordinal, RelNode parent) {
          if (!seen.add(n)) {
            return;
          }
          CatalogTable t = n instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
          if (t != null) {
            double share = parent instanceof LogicalFilter f ? passing(f, t) : 1;
            rows.merge(t.name(), t.rows() * share, Double::sum);
          }
          super.visit(n, ordinal, parent);
        }
      }.go(node);
    }

    double of(String table) {
      return paired.contains(table) ? Double.POSITIVE_INFINITY : rows.getOrDefault(table, Double.POSITIVE_INFINITY);
    }
  }

  /** The tables a node scans, and those a join at or below it has on both sides. */
  private record Tables(java.util.Set<String> scanned, java.util.Set<String> paired) {}

  private final Map<RelNode, Tables> tables = new java.util.IdentityHashMap<>();

  /** {@link Tables} of {@code node}, each node's found once; a node of one input that scans nothing shares its input's. */
  private Tables tables(RelNode node) {
    Tables known = tables.get(node);
    if (known != null) {
      return known;
    }
    CatalogTable t = node instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
    List<RelNode> inputs = node.getInputs();
    if (t == null && inputs.size() == 1) {
      known = tables(inputs.get(0));
    } else {
      java.util.Set<String> scanned = new java.util.HashSet<>();
      java.util.Set<String> paired = new java.util.HashSet<>();
      if (t != null) {
        scanned.add(t.name());
      }
      for (RelNode in : inputs) {
        Tables below = tables(in);
        scanned.addAll(below.scanned());
        paired.addAll(below.paired());
      }
      if (node instanceof LogicalJoin j) {
        java.util.Set<String> both = new java.util.HashSet<>(tables(j.getLeft()).scanned());
        both.retainAll(tables(j.getRight()).scanned());
        paired.addAll(both);
      }
      known = new Tables(scanned, paired);
    }
    tables.put(node, known);
    return known;
  }

  private static double sum(Map<String, Double> sources) {
    return sources.values().stream().mapToDouble(Double::doubleValue).sum();
  }

  private Map<String, Double> find(RelNode node, int column) {
    if (node instanceof TableScan scan) {
      CatalogTable t = scan.getTable().unwrap(CatalogTable.class);
      if (t == null) {
        return null;
      }
      tableOf.put(t.columnName(column), t.name());
      return Map.of(t.columnName(column), t.distinctBound(column));
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
      Map<String, Double> own = column < n
          ? padded(sources.get(j.getLeft(), column, this::find), type == JoinRelType.RIGHT || type == JoinRelType.FULL)
          : padded(sources.get(j.getRight(), column - n, this::find), type == JoinRelType.LEFT || type == JoinRelType.FULL);
      if (type == JoinRelType.INNER || type == JoinRelType.SEMI) {
        org.apache.calcite.rel.core.JoinInfo info = j.analyzeCondition();
        int k = column < n ? info.leftKeys.indexOf(column) : info.rightKeys.indexOf(column - n);
        Map<String, Double> other = k < 0 ? null : column < n ? sources.get(j.getRight(), info.rightKeys.get(k), this::find)
            : sources.get(j.getLeft(), info.leftKeys.get(k), this::find);
        if (other != null && (own == null || sum(other) < sum(own))) {
          return other;
        }
      }
      return own;
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
