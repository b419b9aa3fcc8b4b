package dev.gpudf.sql;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.calcite.plan.RelOptTable;
import org.apache.calcite.prepare.RelOptTableImpl;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.JoinInfo;
import org.apache.calcite.rel.core.JoinRelType;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.logical.LogicalAggregate;
import org.apache.calcite.rel.logical.LogicalFilter;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.logical.LogicalTableScan;
import org.apache.calcite.rel.logical.LogicalUnion;
import org.apache.calcite.rel.logical.LogicalValues;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * Part of the last logical rewrite ({@link ChunkSplit}): a join whose whole input — the side that
 * every chunk branch of the other side reads, held once per query — would exceed {@link
 * Catalog#partitionBytes} runs as P joins of matching partitions instead, so that a query holds a
 * P-th of that input at a time (a grace hash join whose partitions are read again from the
 * catalog instead of spilled). Partition {@code i} of an integer key column holds the rows whose
 * value {@code v} has {@code |v mod P| = i}, and the rows where it is null in partition 0; P is
 * prime, so that keys with a common stride (TPC-H's order keys) spread. Equal keys, and two nulls
 * (for a null-safe condition), meet in one partition, so an inner, left, semi or anti join of
 * partition pairs is the join of the whole inputs; right and full joins are left whole. Rows are
 * restricted where they are read: each partition's scan of a chunk is a scan of its own (the
 * planner would otherwise share one scan between the partitions, held until the last), under the
 * partition's filter; an input already partitioned on the key with the same P (the next join of
 * TPC-H q21 on the same order key) keeps its partitions and is not read again.
 */
final class JoinPartitioning {
  private JoinPartitioning() {}

  /** The most partitions a join gets: past this, one partition is more than the bound. */
  static final int MAX_PARTS = 61;
  private static final int[] PRIMES = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61};
  /** Join types whose output's left columns are the left input's, never padded with nulls. */
  private static final Set<JoinRelType> KEEPS_LEFT = EnumSet.of(JoinRelType.INNER, JoinRelType.LEFT, JoinRelType.SEMI,
      JoinRelType.ANTI);
  /** Join types whose output's right columns are the right input's, never padded with nulls. */
  private static final Set<JoinRelType> KEEPS_RIGHT = EnumSet.of(JoinRelType.INNER, JoinRelType.RIGHT);
  /** Join types that output a row for every right row (left columns null where none matched). */
  private static final Set<JoinRelType> PRESERVES_RIGHT = EnumSet.of(JoinRelType.RIGHT, JoinRelType.FULL);
  /** Join types that output nothing where the right input is empty. */
  private static final Set<JoinRelType> NEEDS_RIGHT = EnumSet.of(JoinRelType.INNER, JoinRelType.SEMI, JoinRelType.RIGHT);

  /** Partition {@code index} of {@code parts}; index -1: rows of several partitions of {@code parts}, in inputs apart. */
  record Part(int parts, int index) {}

  /** The key columns of a join to partition on, and into how many partitions. */
  record Keys(int left, int right, int parts) {}

  /**
   * The keys to partition {@code join} on, or null to leave it whole: a join with an equality of
   * integer columns, whose input {@code whole} (one of {@code left} and
   * {@code right}, the visited inputs; the other is split per chunk) passes rows of chunks ({@link
   * ChunkSplit#chunkRowsPassing}: what its scans' filters keep by the files' ranges, through
   * grouped aggregates) of more than {@code bound} bytes by a row-width estimate. A key on
   * which an input is already partitioned is preferred, with its partition count.
   */
  static Keys choose(LogicalJoin join, RelNode left, RelNode right, RelNode whole, long bound, DistinctBounds bounds) {
    double bytes = ChunkSplit.chunkRowsPassing(whole, bounds) * rowBytes(whole.getRowType());
    if (bytes <= bound) {
      return null;
    }
    JoinInfo info = join.analyzeCondition();
    Keys chosen = null;
    for (int k = 0; k < info.leftKeys.size(); k++) {
      int l = info.leftKeys.get(k);
      int r = info.rightKeys.get(k);
      if (!isInteger(left.getRowType().getFieldList().get(l)) || !isInteger(right.getRowType().getFieldList().get(r))) {
        continue;
      }
      int had = Math.max(partsOf(left, l), partsOf(right, r));
      if (had > 0) {
        return new Keys(l, r, had);
      }
      if (chosen == null) {
        chosen = new Keys(l, r, parts(bytes / Math.max(1, bound)));
      }
    }
    return chosen;
  }

  /**
   * The group key to aggregate {@code aggregate} of the union {@code input} by in partitions
   * ({@link Keys#left} its column of the input), or null to aggregate it whole: a plain grouped
   * aggregate with an integer key, whose groups could pass {@code bound} bytes. Its groups are at
   * most the rows that reach it ({@link ChunkSplit#chunkRowsPassing}) and at most the combinations of its
   * keys' values ({@link DistinctBounds}): TPC-H q9's nations and years are 25 x 2,406 order dates
   * whatever the scale, where partitions would run its joins once each for nothing. A key on
   * which the input is already partitioned is preferred, with its partition count, and costs no
   * second read.
   */
  static Keys chooseGroups(LogicalAggregate aggregate, RelNode input, long bound, DistinctBounds bounds) {
    if (aggregate.getGroupType() != Aggregate.Group.SIMPLE || aggregate.getGroupSet().isEmpty()) {
      return null;
    }
    double groups = ChunkSplit.chunkRowsPassing(input, bounds);
    Double keyBound = bounds.of(input, aggregate.getGroupSet());
    double bytes = (keyBound == null ? groups : Math.min(groups, keyBound)) * rowBytes(aggregate.getRowType());
    if (bytes <= bound) {
      return null;
    }
    Keys chosen = null;
    long most = -1;
    for (int k : aggregate.getGroupSet()) {
      if (!isInteger(input.getRowType().getFieldList().get(k))) {
        continue;
      }
      int had = partsOf(input, k);
      if (had > 0) {
        return new Keys(k, k, had);
      }
      int parts = parts(bytes / Math.max(1, bound));
      long restricted = restrictedRows(input, k, parts);
      if (restricted > most) {
        most = restricted;
        chosen = new Keys(k, k, parts);
      }
    }
    return chosen;
  }

  /**
   * Rows of table chunks that partition 0 of {@code input} on {@code column} reads restricted at
   * their scans; -1 where it reads more rows of chunks unrestricted, the same scans as the whole
   * input's. Those it would join once per partition (TPC-H q10's lineitem under partitions of
   * customer keys): P times the work to save the memory of some groups.
   */
  private static long restrictedRows(RelNode input, int column, int parts) {
    RelNode part = restrict(input, column, parts, 0);
    if (part == null) {
      return 0;
    }
    Set<RelNode> whole = nodes(input);
    long restricted = 0;
    long unrestricted = 0;
    for (RelNode node : nodes(part)) {
      CatalogTable t = node instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
      if (t != null && t.isChunk()) {
        if (whole.contains(node)) {
          unrestricted += t.rows();
        } else {
          restricted += t.rows();
        }
      }
    }
    return restricted > unrestricted ? restricted : -1;
  }

  /** Every node of {@code root}, a subtree that several parents share once. */
  private static Set<RelNode> nodes(RelNode root) {
    Set<RelNode> all = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    new org.apache.calcite.rel.RelVisitor() {
      @Override
      public void visit(RelNode node, int ordinal, RelNode parent) {
        if (all.add(node)) {
          super.visit(node, ordinal, parent);
        }
      }
    }.go(root);
    return all;
  }

  /** The smallest prime of at least {@code ratio} partitions, at most {@link #MAX_PARTS}. */
  static int parts(double ratio) {
    for (int p : PRIMES) {
      if (p >= ratio) {
        return p;
      }
    }
    return MAX_PARTS;
  }

  private static boolean isInteger(RelDataTypeField f) {
    return SqlTypeName.INT_TYPES.contains(f.getType().getSqlTypeName());
  }

  /** Bytes a row of {@code type} holds on the device, roughly: strings 24 (offset and a short value), the rest 8. */
  static long rowBytes(RelDataType type) {
    long bytes = 0;
    for (RelDataTypeField f : type.getFieldList()) {
      bytes += SqlTypeName.CHAR_TYPES.contains(f.getType().getSqlTypeName()) ? 24 : 8;
    }
    return Math.max(1, bytes);
  }

  /** The partition count that {@code node} is known to be partitioned by on {@code column}, or 0. */
  static int partsOf(RelNode node, int column) {
    Part p = new Known().of(node, column);
    return p == null ? 0 : p.parts();
  }

  /**
   * What is known of the partitions of plans' columns, each node and column looked at once.
   */
  private static final class Known {
    private final ColumnMemo<Part> seen = new ColumnMemo<>();

    /**
     * The partition that every row of {@code node} is known to hold in {@code column}: from a
     * partition filter ({@link #restrict}) below it, followed through filters, projections that
     * pass the column on, the kept side of joins, the keys of plain aggregates and the inputs of a
     * union (index -1 where they are partitions of one count but not the same one). Null where not
     * known.
     */
    Part of(RelNode node, int column) {
      return seen.get(node, column, this::find);
    }

    private Part find(RelNode node, int column) {
      if (node instanceof LogicalFilter f) {
        Part p = parse(f.getCondition(), column);
        return p != null ? p : of(f.getInput(), column);
      }
      if (node instanceof LogicalProject p) {
        return p.getProjects().get(column) instanceof RexInputRef r ? of(p.getInput(), r.getIndex()) : null;
      }
      if (node instanceof LogicalJoin j) {
        int n = j.getLeft().getRowType().getFieldCount();
        if (column < n) {
          return KEEPS_LEFT.contains(j.getJoinType()) ? of(j.getLeft(), column) : null;
        }
        return KEEPS_RIGHT.contains(j.getJoinType()) ? of(j.getRight(), column - n) : null;
      }
      if (node instanceof LogicalAggregate a) {
        return a.getGroupType() == Aggregate.Group.SIMPLE && column < a.getGroupCount()
            ? of(a.getInput(), a.getGroupSet().nth(column)) : null;
      }
      if (node instanceof LogicalUnion u && u.all) {
        Part agreed = null;
        for (RelNode in : u.getInputs()) {
          Part p = of(in, column);
          if (p == null || (agreed != null && agreed.parts() != p.parts())) {
            return null;
          }
          agreed = agreed == null || agreed.equals(p) ? p : new Part(p.parts(), -1);
        }
        return agreed;
      }
      return null;
    }
  }

  /**
   * The rows of {@code node} in partition {@code index} of {@code parts} on {@code column}, or null
   * where none can be (its rows are known to be in another); see {@link Restriction}.
   */
  static RelNode restrict(RelNode node, int column, int parts, int index) {
    return new Restriction(parts, index).apply(node, column);
  }

  /**
   * Restricts plans to partition {@code index} of {@code parts}: the restriction moves down through
   * filters, projections, the kept side of joins (and the other side by the key it equals),
   * aggregate keys and unions to the scans, each of which becomes a scan of its own under a
   * partition filter; anything else is filtered where it is. A subtree that several parents share
   * is restricted once, so its restriction is shared too (and runs once per query) rather than
   * copied once per path.
   */
  static final class Restriction {
    private final int parts;
    private final int index;
    private final Known known = new Known();
    private final ColumnMemo<RelNode> done = new ColumnMemo<>();

    Restriction(int parts, int index) {
      this.parts = parts;
      this.index = index;
    }

    /** The rows of {@code node} in this partition on {@code column}, or null where none can be. */
    RelNode apply(RelNode node, int column) {
      return done.get(node, column, this::restricted);
    }

    private RelNode restricted(RelNode node, int column) {
      Part p = known.of(node, column);
      if (p != null && p.parts() == parts && p.index() >= 0) {
        return p.index() == index ? node : null;
      }
      if (node instanceof LogicalFilter f) {
        RelNode in = apply(f.getInput(), column);
        return in == null ? null : f.copy(f.getTraitSet(), in, f.getCondition());
      }
      if (node instanceof LogicalProject pr && pr.getProjects().get(column) instanceof RexInputRef r) {
        RelNode in = apply(pr.getInput(), r.getIndex());
        return in == null ? null : pr.copy(pr.getTraitSet(), List.of(in));
      }
      if (node instanceof LogicalJoin j) {
        int n = j.getLeft().getRowType().getFieldCount();
        boolean onLeft = column < n;
        if (onLeft ? KEEPS_LEFT.contains(j.getJoinType()) : KEEPS_RIGHT.contains(j.getJoinType())) {
          // the side the column is on; where it is a key of an equality, the other side by its key too
          int[] keys = onLeft ? keyPartner(j, column, -1) : keyPartner(j, -1, column - n);
          int leftKey = onLeft ? column : keys[0];
          int rightKey = onLeft ? keys[1] : column - n;
          return join(j, leftKey < 0 ? j.getLeft() : apply(j.getLeft(), leftKey),
              rightKey < 0 ? j.getRight() : apply(j.getRight(), rightKey));
        }
      }
      if (node instanceof LogicalAggregate a && a.getGroupType() == Aggregate.Group.SIMPLE && column < a.getGroupCount()) {
        RelNode in = apply(a.getInput(), a.getGroupSet().nth(column));
        return in == null ? null : a.copy(a.getTraitSet(), List.of(in));
      }
      if (node instanceof LogicalUnion u && u.all) {
        List<RelNode> kept = new ArrayList<>();
        for (RelNode in : u.getInputs()) {
          RelNode r = apply(in, column);
          if (r != null) {
            kept.add(r);
          }
        }
        return kept.isEmpty() ? null : kept.size() == 1 ? kept.get(0) : LogicalUnion.create(kept, true);
      }
      RelNode read = node instanceof TableScan scan ? ownScan(scan, parts, index) : node;
      return LogicalFilter.create(read, predicate(node.getCluster().getRexBuilder(), read.getRowType(), column, parts, index));
    }
  }

  /**
   * {@code {left, right}} with the one given (the other -1) and, where it is a key of one of {@code
   * j}'s equalities of integer columns, the key it equals on the other input (else -1).
   */
  private static int[] keyPartner(LogicalJoin j, int left, int right) {
    JoinInfo info = j.analyzeCondition();
    for (int k = 0; k < info.leftKeys.size(); k++) {
      int l = info.leftKeys.get(k);
      int r = info.rightKeys.get(k);
      if ((l == left || r == right) && isInteger(j.getLeft().getRowType().getFieldList().get(l))
          && isInteger(j.getRight().getRowType().getFieldList().get(r))) {
        return new int[] {l, r};
      }
    }
    return new int[] {left, right};
  }

  /**
   * {@code join} over restricted inputs, of which null is one known to hold no row: null where
   * the join then outputs nothing, else that input as an empty one.
   */
  static RelNode join(LogicalJoin join, RelNode left, RelNode right) {
    JoinRelType type = join.getJoinType();
    if (left == null && !PRESERVES_RIGHT.contains(type) || right == null && NEEDS_RIGHT.contains(type)) {
      return null;
    }
    return join.copy(join.getTraitSet(), List.of(left != null ? left : LogicalValues.createEmpty(join.getCluster(),
        join.getLeft().getRowType()), right != null ? right : LogicalValues.createEmpty(join.getCluster(),
        join.getRight().getRowType())));
  }

  /** A scan of {@code scan}'s table named apart for partition {@code index}: the planners share scans of one name. */
  private static RelNode ownScan(TableScan scan, int parts, int index) {
    CatalogTable t = scan.getTable().unwrap(CatalogTable.class);
    if (t == null) {
      return scan;
    }
    List<String> name = new ArrayList<>(scan.getTable().getQualifiedName());
    name.add(Math.min(2, name.size()), "part " + index + " of " + parts);
    RelOptTable own = RelOptTableImpl.create(scan.getTable().getRelOptSchema(), scan.getRowType(), name, t,
        (org.apache.calcite.linq4j.tree.Expression) null);
    return LogicalTableScan.create(scan.getCluster(), own, scan.getHints());
  }

  /** {@code |column mod parts| = index}, or with {@code column IS NULL} for partition 0. */
  static RexNode predicate(RexBuilder b, RelDataType rowType, int column, int parts, int index) {
    RexNode ref = b.makeInputRef(rowType.getFieldList().get(column).getType(), column);
    RexNode bucket = b.makeCall(SqlStdOperatorTable.ABS, b.makeCall(SqlStdOperatorTable.MOD, ref,
        b.makeExactLiteral(BigDecimal.valueOf(parts))));
    RexNode is = b.makeCall(SqlStdOperatorTable.EQUALS, bucket, b.makeExactLiteral(BigDecimal.valueOf(index)));
    return index == 0 ? b.makeCall(SqlStdOperatorTable.OR, b.makeCall(SqlStdOperatorTable.IS_NULL, ref), is) : is;
  }

  /** The partition that {@link #predicate} condition {@code c} selects on {@code column}, or null if it is none. */
  private static Part parse(RexNode c, int column) {
    if (c.isA(SqlKind.OR) && c instanceof RexCall or && or.getOperands().size() == 2
        && or.getOperands().get(0) instanceof RexCall isNull && isNull.isA(SqlKind.IS_NULL)
        && isRef(isNull.getOperands().get(0), column)) {
      Part p = bucket(or.getOperands().get(1), column);
      return p != null && p.index() == 0 ? p : null;
    }
    // partition 0 is the one that holds the nulls: an equality alone is no filter of it
    Part p = bucket(c, column);
    return p != null && p.index() != 0 ? p : null;
  }

  /** {@code |column mod P| = i} as the partition it names, or null. */
  private static Part bucket(RexNode c, int column) {
    if (c.isA(SqlKind.EQUALS) && c instanceof RexCall eq && eq.getOperands().get(1) instanceof RexLiteral i
        && eq.getOperands().get(0) instanceof RexCall abs && abs.getOperator().getName().equals("ABS")
        && abs.getOperands().get(0) instanceof RexCall mod && mod.isA(SqlKind.MOD)
        && isRef(mod.getOperands().get(0), column) && mod.getOperands().get(1) instanceof RexLiteral p) {
      Integer parts = p.getValueAs(Integer.class);
      Integer index = i.getValueAs(Integer.class);
      return parts == null || index == null ? null : new Part(parts, index);
    }
    return null;
  }

  private static boolean isRef(RexNode n, int column) {
    return n instanceof RexInputRef r && r.getIndex() == column;
  }
}
