package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelShuttleImpl;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.logical.LogicalFilter;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.metadata.RelColumnOrigin;
import org.apache.calcite.rel.metadata.RelMdUtil;
import org.apache.calcite.rel.metadata.RelMetadataQuery;
import org.apache.calcite.rel.rules.MultiJoin;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexShuttle;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.util.Sarg;

/**
 * Join order for trees of inner joins: each {@link MultiJoin} of inner joins becomes a tree of
 * binary joins chosen greedily, always joining next the two inputs whose join is estimated to
 * have the fewest rows (greedy operator ordering). An equality between two inputs' columns
 * keeps {@code 1 / max(distinct values)} of the pairs, the distinct counts measured on the
 * catalog's tables, and a small table's filter keeps the rows counted by running it
 * ({@link ColumnStats}); Calcite's own heuristic guesses a fixed selectivity
 * per equality, which joined TPC-H q5's customers to its suppliers on their nation first (10^9
 * rows at SF10). MultiJoins with outer joins are left to Calcite's heuristic.
 */
final class JoinOrder {
  private final ColumnStats stats;

  JoinOrder(ColumnStats stats) {
    this.stats = stats;
  }

  /** {@code rel} with every MultiJoin of inner joins replaced by ordered binary joins. */
  RelNode apply(RelNode rel) {
    return rel.accept(new RelShuttleImpl() {
      @Override
      public RelNode visit(RelNode other) {
        RelNode visited = super.visit(other);
        return visited instanceof MultiJoin mj && innerOnly(mj) ? order(mj) : visited;
      }
    });
  }

  private static boolean innerOnly(MultiJoin mj) {
    return !mj.isFullOuterJoin() && mj.getJoinTypes().stream().allMatch(t -> t == JoinRelType.INNER);
  }

  /** A joined subset of the inputs: its plan, which inputs it holds, where each MultiJoin field sits in its row, its estimated rows. */
  private record Part(RelNode rel, BitSet inputs, int[] position, double rows) {}

  /** A conjunct of the join condition, with the inputs it reads. */
  private record Conjunct(RexNode condition, BitSet inputs) {}

  private RelNode order(MultiJoin mj) {
    RelMetadataQuery mq = mj.getCluster().getMetadataQuery();
    RexBuilder rex = mj.getCluster().getRexBuilder();
    List<RelNode> inputs = mj.getInputs();
    int fields = mj.getRowType().getFieldCount();
    int[] inputOf = new int[fields];
    int[] offset = new int[inputs.size()];
    List<Part> parts = new ArrayList<>();
    double largest = inputs.stream().mapToDouble(mq::getRowCount).max().orElse(0);
    for (int i = 0, f = 0; i < inputs.size(); i++) {
      offset[i] = f;
      int[] position = new int[fields];
      java.util.Arrays.fill(position, -1);
      for (int c = 0; c < inputs.get(i).getRowType().getFieldCount(); c++, f++) {
        inputOf[f] = i;
        position[f] = c;
      }
      BitSet one = new BitSet();
      one.set(i);
      parts.add(new Part(inputs.get(i), one, position, rows(mq, inputs.get(i), largest)));
    }
    Estimates estimates = new Estimates(mq, inputs, inputOf, offset);
    List<Conjunct> pending = new ArrayList<>();
    for (RexNode c : RelOptUtil.conjunctions(mj.getJoinFilter())) {
      if (!c.isAlwaysTrue()) {
        BitSet reads = new BitSet();
        RelOptUtil.InputFinder.bits(c).forEach(f -> reads.set(inputOf[f]));
        pending.add(new Conjunct(c, reads));
      }
    }
    while (parts.size() > 1) {
      int bestA = -1;
      int bestB = -1;
      double best = Double.MAX_VALUE;
      boolean bestConnected = false;
      for (int a = 0; a < parts.size(); a++) {
        for (int b = a + 1; b < parts.size(); b++) {
          List<Conjunct> joining = joining(pending, parts.get(a), parts.get(b));
          double rows = parts.get(a).rows() * parts.get(b).rows() * estimates.selectivity(joining);
          boolean connected = !joining.isEmpty();
          // a join with a condition always beats a cross product, whatever the estimates say
          if ((connected && !bestConnected) || (connected == bestConnected && rows < best)) {
            best = rows;
            bestA = a;
            bestB = b;
            bestConnected = connected;
          }
        }
      }
      Part b = parts.remove(bestB);
      Part a = parts.remove(bestA);
      parts.add(join(rex, a, b, pending, Math.max(1, best)));
    }
    Part all = parts.get(0);
    RelNode rel = all.rel();
    if (!pending.isEmpty()) {
      // conditions no join took (on one input, or on constants): the rewrites after this push them down
      rel = LogicalFilter.create(rel, RexUtil.composeConjunction(rex,
          pending.stream().map(c -> remap(c.condition(), all.position())).toList()));
    }
    List<RexNode> projects = new ArrayList<>();
    for (int f = 0; f < fields; f++) {
      projects.add(new RexInputRef(all.position()[f], mj.getRowType().getFieldList().get(f).getType()));
    }
    rel = LogicalProject.create(rel, List.of(), projects, mj.getRowType().getFieldNames(), java.util.Set.of());
    return mj.getPostJoinFilter() == null ? rel : LogicalFilter.create(rel, mj.getPostJoinFilter());
  }

  /**
   * Estimated rows of a MultiJoin input. A filter's equality with constants ({@code n_name =
   * 'FRANCE'}, {@code IN} lists) on a catalog column keeps as many of the column's measured
   * distinct values as it names; Calcite guesses a fixed share (q7's two nations, 2 of 25 rows,
   * looked like half the table). Only on tables of at most a quarter of the largest input's rows:
   * the small tables whose filters decide which join comes first. A fact table's own filters
   * matter less to the order, and counting distinct values of its columns (TPC-H's l_shipmode:
   * 600M rows at SF100) would cost its first plan a pass over them.
   * Other conditions and inputs keep Calcite's estimate.
   */
  private double rows(RelMetadataQuery mq, RelNode input, double largest) {
    RelNode r = input;
    while (r instanceof Project) {
      r = r.getInput(0);
    }
    if (!(r instanceof Filter filter)) {
      return Math.max(1, mq.getRowCount(input));
    }
    OptionalDouble counted = counted(mq, filter, largest);
    if (counted.isPresent()) {
      return Math.max(1, mq.getRowCount(filter.getInput()) * counted.getAsDouble());
    }
    double share = 1;
    boolean measured = false;
    for (RexNode c : RelOptUtil.conjunctions(filter.getCondition())) {
      int points = constants(c);
      ColumnOrigin origin = points > 0 ? origin(mq, filter.getInput(), ((RexCall) c).getOperands().get(0)) : null;
      java.util.OptionalDouble distinct = origin == null || origin.table().rows() * 4.0 > largest
          ? java.util.OptionalDouble.empty()
          : stats.distinct(origin.table().name(), origin.column());
      if (distinct.isPresent() && distinct.getAsDouble() > 0) {
        share *= Math.min(1, points / distinct.getAsDouble());
        measured = true;
      } else {
        share *= RelMdUtil.guessSelectivity(c);
      }
    }
    return Math.max(1, measured ? mq.getRowCount(filter.getInput()) * share : mq.getRowCount(input));
  }

  /**
   * The share of rows {@code filter} keeps, counted on its table ({@link ColumnStats#keptShare})
   * when it reads the columns of one catalog table of at most a quarter of the largest input's
   * rows and nothing else; else empty. A range on a dimension (q99's twelve months of
   * d_month_seq: 0.5% of date_dim) is no point filter, and Calcite guesses a quarter or a half of
   * the table for it, which made that join, the one that keeps a fifth of the sales, run last.
   */
  private OptionalDouble counted(RelMetadataQuery mq, Filter filter, double largest) {
    CatalogTable[] table = {null};
    List<Integer> columns = new ArrayList<>();
    boolean[] readable = {true};
    RexNode condition = filter.getCondition().accept(new RexShuttle() {
      @Override
      public RexNode visitInputRef(RexInputRef ref) {
        ColumnOrigin origin = origin(mq, filter.getInput(), ref);
        if (origin == null || (table[0] != null && table[0] != origin.table())) {
          readable[0] = false;
          return ref;
        }
        table[0] = origin.table();
        int at = columns.indexOf(origin.column());
        if (at < 0) {
          at = columns.size();
          columns.add(origin.column());
        }
        return new RexInputRef(at, ref.getType());
      }

      @Override
      public RexNode visitDynamicParam(org.apache.calcite.rex.RexDynamicParam param) {
        readable[0] = false;
        return param;
      }

      @Override
      public RexNode visitSubQuery(org.apache.calcite.rex.RexSubQuery subQuery) {
        readable[0] = false;
        return subQuery;
      }

      @Override
      public RexNode visitCorrelVariable(org.apache.calcite.rex.RexCorrelVariable variable) {
        readable[0] = false;
        return variable;
      }
    });
    if (!readable[0] || table[0] == null || table[0].rows() * 4.0 > largest) {
      return OptionalDouble.empty();
    }
    return stats.keptShare(table[0].name(), columns.stream().mapToInt(Integer::intValue).toArray(), condition,
        filter.getCluster());
  }

  /** How many constants {@code c} equates its first operand with ({@code x = 1}, {@code x IN (1, 2)}), or 0. */
  private static int constants(RexNode c) {
    if (!(c instanceof RexCall call) || call.getOperands().size() != 2
        || !(call.getOperands().get(1) instanceof RexLiteral literal)) {
      return 0;
    }
    if (c.getKind() == SqlKind.EQUALS) {
      return 1;
    }
    if (c.getKind() == SqlKind.SEARCH) {
      Sarg<?> sarg = literal.getValueAs(Sarg.class);
      return sarg != null && sarg.isPoints() ? sarg.rangeSet.asRanges().size() : 0;
    }
    return 0;
  }

  /** A catalog table's column. */
  private record ColumnOrigin(CatalogTable table, int column) {}

  /** The catalog column {@code field} of {@code rel} reads unchanged, or null. */
  private static ColumnOrigin origin(RelMetadataQuery mq, RelNode rel, RexNode field) {
    if (!(field instanceof RexInputRef ref)) {
      return null;
    }
    RelColumnOrigin origin = mq.getColumnOrigin(rel, ref.getIndex());
    CatalogTable table = origin == null || origin.isDerived() ? null : origin.getOriginTable().unwrap(CatalogTable.class);
    return table == null ? null : new ColumnOrigin(table, origin.getOriginColumnOrdinal());
  }

  /** The pending conjuncts that a join of {@code a} and {@code b} can apply: they read both and nothing else. */
  private static List<Conjunct> joining(List<Conjunct> pending, Part a, Part b) {
    List<Conjunct> out = new ArrayList<>();
    for (Conjunct c : pending) {
      BitSet rest = (BitSet) c.inputs().clone();
      rest.andNot(a.inputs());
      rest.andNot(b.inputs());
      if (rest.isEmpty() && c.inputs().intersects(a.inputs()) && c.inputs().intersects(b.inputs())) {
        out.add(c);
      }
    }
    return out;
  }

  /** Joins {@code a} and {@code b} on what they can apply; the larger goes on the left (the probe side, whose order the output keeps). */
  private static Part join(RexBuilder rex, Part a, Part b, List<Conjunct> pending, double rows) {
    Part left = a.rows() >= b.rows() ? a : b;
    Part right = left == a ? b : a;
    List<Conjunct> applied = joining(pending, left, right);
    pending.removeAll(applied);
    int leftFields = left.rel().getRowType().getFieldCount();
    int[] position = left.position().clone();
    for (int f = 0; f < position.length; f++) {
      if (right.position()[f] >= 0) {
        position[f] = leftFields + right.position()[f];
      }
    }
    RexNode condition = RexUtil.composeConjunction(rex, applied.stream().map(c -> remap(c.condition(), position)).toList());
    RelNode rel = LogicalJoin.create(left.rel(), right.rel(), List.of(), condition, java.util.Set.of(), JoinRelType.INNER);
    BitSet both = (BitSet) left.inputs().clone();
    both.or(right.inputs());
    return new Part(rel, both, position, rows);
  }

  private static RexNode remap(RexNode condition, int[] position) {
    return condition.accept(new RexShuttle() {
      @Override
      public RexNode visitInputRef(RexInputRef ref) {
        return new RexInputRef(position[ref.getIndex()], ref.getType());
      }
    });
  }

  /** Row estimates over one MultiJoin's inputs. */
  private final class Estimates {
    private final RelMetadataQuery mq;
    private final List<RelNode> inputs;
    private final int[] inputOf;
    private final int[] offset;

    Estimates(RelMetadataQuery mq, List<RelNode> inputs, int[] inputOf, int[] offset) {
      this.mq = mq;
      this.inputs = inputs;
      this.inputOf = inputOf;
      this.offset = offset;
    }

    /**
     * The share of pairs {@code conjuncts} keep together. The column equalities between two
     * inputs form one key (l_partkey = ps_partkey AND l_suppkey = ps_suppkey is one foreign
     * key, not two independent filters): it keeps one pair in the larger of the two sides'
     * distinct key values. Any other condition keeps Calcite's guess.
     */
    double selectivity(List<Conjunct> conjuncts) {
      double share = 1;
      // per (input, input): the fields on each side
      Map<List<Integer>, List<List<Integer>>> keys = new LinkedHashMap<>();
      for (Conjunct c : conjuncts) {
        RexNode condition = c.condition();
        if (condition.getKind() == SqlKind.EQUALS && condition instanceof RexCall call
            && call.getOperands().get(0) instanceof RexInputRef x && call.getOperands().get(1) instanceof RexInputRef y
            && inputOf[x.getIndex()] != inputOf[y.getIndex()]) {
          int fx = Math.min(x.getIndex(), y.getIndex());
          int fy = Math.max(x.getIndex(), y.getIndex());
          List<List<Integer>> sides = keys.computeIfAbsent(List.of(inputOf[fx], inputOf[fy]),
              k -> List.of(new ArrayList<>(), new ArrayList<>()));
          sides.get(0).add(fx);
          sides.get(1).add(fy);
        } else {
          share *= RelMdUtil.guessSelectivity(condition);
        }
      }
      for (List<List<Integer>> sides : keys.values()) {
        share /= Math.max(1, Math.max(distinct(sides.get(0)), distinct(sides.get(1))));
      }
      return share;
    }

    /**
     * Distinct values of MultiJoin fields {@code fields}, all of one input: measured on their
     * table when they are its columns, else that input's rows (as if a key); never more than
     * the input's estimated rows.
     */
    private double distinct(List<Integer> fields) {
      int i = inputOf[fields.get(0)];
      RelNode input = inputs.get(i);
      double rows = Math.max(1, mq.getRowCount(input));
      CatalogTable table = null;
      int[] columns = new int[fields.size()];
      for (int k = 0; k < columns.length; k++) {
        ColumnOrigin origin = origin(mq, input, new RexInputRef(fields.get(k) - offset[i],
            input.getRowType().getFieldList().get(fields.get(k) - offset[i]).getType()));
        if (origin == null || (table != null && table != origin.table())) {
          return rows;
        }
        table = origin.table();
        columns[k] = origin.column();
      }
      return Math.min(rows, stats.distinct(table.name(), columns).orElse(rows));
    }
  }
}
