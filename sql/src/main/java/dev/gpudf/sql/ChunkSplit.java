package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelOptRule;
import org.apache.calcite.plan.RelOptTable;
import org.apache.calcite.prepare.RelOptTableImpl;
import org.apache.calcite.rel.AbstractRelNode;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelShuttleImpl;
import org.apache.calcite.rel.RelVisitor;
import org.apache.calcite.rel.RelWriter;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.logical.LogicalAggregate;
import org.apache.calcite.rel.logical.LogicalFilter;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.logical.LogicalTableScan;
import org.apache.calcite.rel.logical.LogicalUnion;
import org.apache.calcite.rel.logical.LogicalValues;
import org.apache.calcite.rel.rules.AggregateReduceFunctionsRule;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.sql.SqlKind;

/**
 * The last logical rewrite, for plans that read chunked tables ({@link Catalog}): each scan of a
 * chunked table becomes the UNION ALL of its chunks' scans, after join ordering (which estimates
 * from the whole table). Filters, projections and joins above the union then move into every
 * branch, and aggregates too (Calcite's {@code AGGREGATE_UNION_TRANSPOSE}; AVG split into SUM and
 * COUNT for that), so a chunk is reduced before the union concatenates what is left and a
 * branch's memory is freed before the next branch runs. A join whose input read whole would pass
 * the catalog's partition bound runs as joins of hash partitions ({@link JoinPartitioning}), and
 * an aggregate whose groups could pass it as aggregates of partitions.
 */
final class ChunkSplit {
  private ChunkSplit() {}

  /** Join types whose left input may split: each left row meets the right input in one branch only. */
  private static final Set<JoinRelType> LEFT_SPLITS = EnumSet.of(JoinRelType.INNER, JoinRelType.LEFT, JoinRelType.SEMI,
      JoinRelType.ANTI);
  private static final Set<JoinRelType> RIGHT_SPLITS = EnumSet.of(JoinRelType.INNER, JoinRelType.RIGHT);

  /**
   * The most operators that the partitions of one join or aggregate may hold (those they share
   * counted once); past it, it is left whole. Partitions of partitions on other keys multiply:
   * TPC-H q21 over 8 chunks planned in 25-60 ms with its joins on one key, and ran out of a 6 GiB
   * heap when its joins were partitioned again on other keys.
   */
  static final int MAX_PARTITIONED_NODES = 20_000;

  /** Counts the operators of plans, each shared one once, until there are more than {@link #MAX_PARTITIONED_NODES}. */
  private static final class NodeCount {
    private final java.util.Set<RelNode> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    /** Adds {@code rel}'s operators; false once there are too many. */
    boolean add(RelNode rel) {
      java.util.ArrayDeque<RelNode> todo = new java.util.ArrayDeque<>(List.of(rel));
      while (!todo.isEmpty() && seen.size() <= MAX_PARTITIONED_NODES) {
        RelNode n = todo.pop();
        if (seen.add(n)) {
          todo.addAll(n.getInputs());
        }
      }
      return seen.size() <= MAX_PARTITIONED_NODES;
    }
  }

  /** AVG as SUM / COUNT where it aggregates a UNION ALL directly, so that the aggregate can move into the union's inputs. */
  private static final RelOptRule AVG_OVER_UNION = AggregateReduceFunctionsRule.Config.DEFAULT
      .withOperandSupplier(b0 -> b0.operand(LogicalAggregate.class).oneInput(b1 -> b1.operand(LogicalUnion.class).anyInputs()))
      .as(AggregateReduceFunctionsRule.Config.class)
      .withFunctionsToReduce(EnumSet.of(SqlKind.AVG))
      .toRule();

  /**
   * {@code logical} with its chunked scans split, and every scan narrowed to what it reads ({@link
   * ScanColumns}); the chunk scans a filter kept and those it dropped are counted in {@code catalog}.
   */
  static RelNode apply(RelNode logical, Catalog catalog) {
    if (!readsChunks(logical)) {
      return ScanColumns.apply(logical);
    }
    // scans narrow before they split: the shuttle would copy a subtree that the branches share
    Splitter splitter = new Splitter(catalog.partitionBytes());
    RelNode split = ScanColumns.apply(logical).accept(splitter);
    catalog.countChunkScans(splitter.filtered, splitter.skipped, splitter.partitioned);
    return split;
  }

  /**
   * {@code rules} applied to the operators {@code above} builds over stand-ins for {@code inputs},
   * then the inputs put back. A planner pass over a plan split per chunk costs in proportion to
   * all of its branches (TPC-H q21 over 8 chunks: about 25 of its 60 ms of planning), while these
   * rules only rewrite the few operators above them.
   */
  private static RelNode overInputs(Function<List<RelNode>, RelNode> above, List<RelNode> inputs, List<RelOptRule> rules) {
    RelOptCluster cluster = inputs.get(0).getCluster();
    List<RelNode> standIns = new ArrayList<>();
    for (int i = 0; i < inputs.size(); i++) {
      standIns.add(new StandIn(cluster, inputs.get(i).getRowType(), i));
    }
    return GpuSession.hep(above.apply(standIns), rules).accept(new RelShuttleImpl() {
      @Override
      public RelNode visit(RelNode other) {
        return other instanceof StandIn in ? inputs.get(in.index) : super.visit(other);
      }
    });
  }

  /**
   * Where an input stands while {@link #overInputs} rewrites what is above it: a leaf of the
   * same row type whose index tells it apart, and of which the planner knows nothing (no unique
   * keys, so an aggregate moved into the branches aggregates every branch).
   */
  private static final class StandIn extends AbstractRelNode {
    private final int index;

    StandIn(RelOptCluster cluster, RelDataType rowType, int index) {
      super(cluster, cluster.traitSet());
      this.rowType = rowType;
      this.index = index;
    }

    @Override
    public RelWriter explainTerms(RelWriter pw) {
      return super.explainTerms(pw).item("input", index);
    }
  }

  private static boolean readsChunks(RelNode rel) {
    boolean[] found = {false};
    new RelVisitor() {
      @Override
      public void visit(RelNode node, int ordinal, RelNode parent) {
        found[0] |= node instanceof TableScan scan && splits(scan.getTable().unwrap(CatalogTable.class));
        super.visit(node, ordinal, parent);
      }
    }.go(rel);
    return found[0];
  }

  private static boolean splits(CatalogTable t) {
    return t != null && t.chunk() < 0 && t.chunks() > 1;
  }

  /** The union of {@code branch} applied to each input of {@code union}. */
  private static RelNode perBranch(RelNode union, UnaryOperator<RelNode> branch) {
    return LogicalUnion.create(union.getInputs().stream().map(branch).toList(), true);
  }

  private static boolean isUnionAll(RelNode rel) {
    return rel instanceof LogicalUnion u && u.all;
  }

  /** Rows of table chunks that {@code rel} scans, not counting scans under an aggregate, which reduces them. */
  static long chunkRowsRead(RelNode rel) {
    return (long) chunkRows(rel, null);
  }

  /**
   * Rows of table chunks that reach the top of {@code rel}, estimated for sizing a join's or an
   * aggregate's input: a chunk scan under a filter counts the share of its rows that the filter
   * passes by the chunk's file metadata ({@link ChunkPruning#passing}; TPC-H q20's lineitem of one
   * year in seven), a grouped aggregate at most its input's rows and its keys' combinations ({@link
   * DistinctBounds#groups}; q17's average quantity per part), one of no group keys nothing (one
   * row). A subtree that several branches share counts once, as it runs once.
   */
  static double chunkRowsPassing(RelNode rel, DistinctBounds bounds) {
    return chunkRows(rel, bounds);
  }

  /** {@link #chunkRowsRead} without {@code bounds}, else {@link #chunkRowsPassing} with them (and their memo, of one planning). */
  private static double chunkRows(RelNode rel, DistinctBounds bounds) {
    boolean passing = bounds != null;
    double[] rows = {0};
    java.util.Set<RelNode> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    new RelVisitor() {
      @Override
      public void visit(RelNode node, int ordinal, RelNode parent) {
        if (node instanceof LogicalAggregate a && (!passing || a.getGroupSet().isEmpty()) || passing && !seen.add(node)) {
          return;
        }
        if (passing && node instanceof LogicalAggregate a) {
          rows[0] += bounds.groups(a);
          return;
        }
        CatalogTable t = node instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
        if (t != null && t.chunk() >= 0) {
          rows[0] += t.rows();
        }
        CatalogTable c = passing && node instanceof LogicalFilter f && f.getInput() instanceof TableScan scan
            ? scan.getTable().unwrap(CatalogTable.class) : null;
        if (c != null && c.chunk() >= 0 && seen.add(node.getInput(0))) {
          rows[0] += c.rows() * bounds.passing((LogicalFilter) node, c);
          return;
        }
        super.visit(node, ordinal, parent);
      }
    }.go(rel);
    return rows[0];
  }

  /** Bottom-up: chunked scans to unions, and the operators right above a union into its branches. */
  private static final class Splitter extends RelShuttleImpl {
    /** Chunk scans under a filter, and of those the ones dropped because their metadata excludes it. */
    long filtered;
    long skipped;
    /** Joins run as joins of partitions and aggregates as aggregates of partitions, together. */
    long partitioned;
    private final long partitionBytes;
    /** Distinct bounds and rows of the plan's nodes, each found once in this planning (nodes do not change). */
    private final DistinctBounds bounds = new DistinctBounds();

    Splitter(long partitionBytes) {
      this.partitionBytes = partitionBytes;
    }

    @Override
    public RelNode visit(TableScan scan) {
      CatalogTable t = scan.getTable().unwrap(CatalogTable.class);
      if (!splits(t)) {
        return scan;
      }
      List<RelNode> branches = new ArrayList<>();
      for (int i = 0; i < t.chunks(); i++) {
        // the name keeps what follows the table's (the columns read): planners tell scans apart by name
        List<String> name = new ArrayList<>(scan.getTable().getQualifiedName());
        name.add(1, "chunk " + i);
        RelOptTable chunk = RelOptTableImpl.create(scan.getTable().getRelOptSchema(), scan.getRowType(), name,
            t.chunk(i), (org.apache.calcite.linq4j.tree.Expression) null);
        branches.add(LogicalTableScan.create(scan.getCluster(), chunk, scan.getHints()));
      }
      return LogicalUnion.create(branches, true);
    }

    /**
     * A filter runs in each branch of a split scan; a branch whose chunk the file metadata shows
     * cannot pass it ({@link ChunkPruning}: a Hive partition's value, a column's range) is dropped.
     */
    @Override
    public RelNode visit(LogicalFilter filter) {
      RelNode input = filter.getInput().accept(this);
      if (!isUnionAll(input)) {
        return filter.copy(filter.getTraitSet(), List.of(input));
      }
      List<RelNode> kept = new ArrayList<>();
      for (RelNode b : input.getInputs()) {
        CatalogTable t = b instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
        List<dev.gpudf.formats.ValueRange> ranges = t == null ? null : t.ranges();
        boolean excluded = ranges != null && ChunkPruning.excludes(filter.getCondition(), ranges, filter.getCluster().getRexBuilder());
        if (!excluded) {
          kept.add(b);
        }
        // a branch of the query's own UNION ALL is no chunk scan
        filtered += t != null && t.isChunk() ? 1 : 0;
        skipped += excluded ? 1 : 0;
      }
      if (kept.isEmpty()) {
        return LogicalValues.createEmpty(filter.getCluster(), filter.getRowType());
      }
      RelNode pruned = kept.size() == input.getInputs().size() ? input
          : kept.size() == 1 ? kept.get(0) : LogicalUnion.create(kept, true);
      return isUnionAll(pruned) ? perBranch(pruned, b -> filter.copy(filter.getTraitSet(), b, filter.getCondition()))
          : filter.copy(filter.getTraitSet(), List.of(pruned));
    }

    @Override
    public RelNode visit(LogicalProject project) {
      RelNode input = project.getInput().accept(this);
      return isUnionAll(input) ? perBranch(input, b -> projected(project, b)) : projected(project, input);
    }

    /** {@code project} over {@code input}, merged with it where it is a projection too, and gone where that keeps every column. */
    private static RelNode projected(LogicalProject project, RelNode input) {
      if (!(input instanceof LogicalProject below)) {
        return project.copy(project.getTraitSet(), List.of(input));
      }
      return overInputs(in -> project.copy(project.getTraitSet(), List.of(below.copy(below.getTraitSet(), in))),
          below.getInputs(), List.of(LogicalRules.PROJECT_MERGE, LogicalRules.PROJECT_REMOVE));
    }

    /**
     * An aggregate of a union moves into its branches (AVG as SUM / COUNT first), and one above
     * combines theirs; where the groups could pass the partition bound, that is done for each
     * hash partition of an integer group key apart ({@link JoinPartitioning#chooseGroups}), whose
     * groups no other partition holds.
     */
    @Override
    public RelNode visit(LogicalAggregate aggregate) {
      RelNode input = aggregate.getInput().accept(this);
      if (!isUnionAll(input)) {
        return aggregate.copy(aggregate.getTraitSet(), List.of(input));
      }
      JoinPartitioning.Keys keys = JoinPartitioning.chooseGroups(aggregate, input, partitionBytes, bounds);
      if (keys == null) {
        return aggregated(aggregate, input);
      }
      List<RelNode> parts = new ArrayList<>();
      NodeCount size = new NodeCount();
      for (int i = 0; i < keys.parts(); i++) {
        RelNode in = JoinPartitioning.restrict(input, keys.left(), keys.parts(), i);
        if (in != null) {
          if (!size.add(in)) {
            return aggregated(aggregate, input);
          }
          parts.add(isUnionAll(in) ? aggregated(aggregate, in) : aggregate.copy(aggregate.getTraitSet(), List.of(in)));
        }
      }
      partitioned++;
      return parts.isEmpty() ? LogicalValues.createEmpty(aggregate.getCluster(), aggregate.getRowType())
          : parts.size() == 1 ? parts.get(0) : LogicalUnion.create(parts, true);
    }

    /** {@code aggregate} over the union {@code input}, moved into its branches. */
    private static RelNode aggregated(LogicalAggregate aggregate, RelNode input) {
      return overInputs(in -> aggregate.copy(aggregate.getTraitSet(), List.of(input.copy(input.getTraitSet(), in))),
          input.getInputs(), List.of(AVG_OVER_UNION, LogicalRules.AGGREGATE_UNION_TRANSPOSE, LogicalRules.PROJECT_MERGE,
              LogicalRules.PROJECT_REMOVE));
    }

    /**
     * A join runs in each branch of a split input ({@link #splitJoin}); where the input it reads
     * whole would exceed the partition bound, it runs as joins of partitions ({@link
     * JoinPartitioning}), each split the same way.
     */
    @Override
    public RelNode visit(LogicalJoin join) {
      RelNode left = join.getLeft().accept(this);
      RelNode right = join.getRight().accept(this);
      RelNode whole = wholeInput(join, left, right);
      JoinPartitioning.Keys keys = whole == null ? null
          : JoinPartitioning.choose(join, left, right, whole, partitionBytes, bounds);
      if (keys == null) {
        return splitJoin(join, left, right);
      }
      List<RelNode> branches = new ArrayList<>();
      NodeCount size = new NodeCount();
      for (int i = 0; i < keys.parts(); i++) {
        // one restriction for both inputs: a subtree they share stays shared
        JoinPartitioning.Restriction part = new JoinPartitioning.Restriction(keys.parts(), i);
        RelNode pair = JoinPartitioning.join(join, part.apply(left, keys.left()), part.apply(right, keys.right()));
        if (pair != null) {
          if (!size.add(pair)) {
            // partitions of partitions on other keys multiply: planning them would cost more than the memory saved
            return splitJoin(join, left, right);
          }
          RelNode joined = splitJoin(join, pair.getInput(0), pair.getInput(1));
          branches.addAll(isUnionAll(joined) ? joined.getInputs() : List.of(joined));
        }
      }
      partitioned++;
      return branches.isEmpty() ? LogicalValues.createEmpty(join.getCluster(), join.getRowType())
          : branches.size() == 1 ? branches.get(0) : LogicalUnion.create(branches, true);
    }

    /** The input of {@code join} that {@link #splitJoin} reads whole in every branch of the other, or null where neither splits. */
    private static RelNode wholeInput(LogicalJoin join, RelNode left, RelNode right) {
      boolean splitsLeft = splitsLeft(join, left, right);
      return splitsLeft ? right : isUnionAll(right) && RIGHT_SPLITS.contains(join.getJoinType()) ? left : null;
    }

    private static boolean splitsLeft(LogicalJoin join, RelNode left, RelNode right) {
      boolean splitsLeft = isUnionAll(left) && LEFT_SPLITS.contains(join.getJoinType());
      boolean splitsRight = isUnionAll(right) && RIGHT_SPLITS.contains(join.getJoinType());
      return splitsLeft && (!splitsRight || chunkRowsRead(left) >= chunkRowsRead(right));
    }

    /**
     * {@code join} of {@code left} and {@code right} in each branch of its larger union input
     * where the join type lets that side split (not the null-supplying side of an outer join: its
     * unmatched rows would repeat per branch); the other input, one node in every branch, runs
     * once per query ({@link QueryContext}) and is concatenated whole. Larger means reading more
     * rows of chunks ({@link #chunkRowsRead}): Calcite's row estimates of joined inputs run far
     * above the truth, and chose to split TPC-H q18's orders and concatenate its 600 million
     * lineitem rows at SF100.
     */
    private static RelNode splitJoin(LogicalJoin join, RelNode left, RelNode right) {
      JoinRelType type = join.getJoinType();
      if (splitsLeft(join, left, right)) {
        return perBranch(left, b -> join.copy(join.getTraitSet(), join.getCondition(), b, right, type, join.isSemiJoinDone()));
      }
      if (isUnionAll(right) && RIGHT_SPLITS.contains(type)) {
        return perBranch(right, b -> join.copy(join.getTraitSet(), join.getCondition(), left, b, type, join.isSemiJoinDone()));
      }
      return join.copy(join.getTraitSet(), List.of(left, right));
    }
  }
}
