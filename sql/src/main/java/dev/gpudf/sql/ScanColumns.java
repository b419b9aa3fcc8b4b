package dev.gpudf.sql;

import java.util.List;
import org.apache.calcite.plan.RelOptTable;
import org.apache.calcite.plan.RelOptUtil;
import org.apache.calcite.prepare.RelOptTableImpl;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelShuttleImpl;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.logical.LogicalTableScan;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexPermuteInputsShuttle;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.util.ImmutableBitSet;
import org.apache.calcite.util.mapping.Mapping;
import org.apache.calcite.util.mapping.MappingType;
import org.apache.calcite.util.mapping.Mappings;

/**
 * Part of the last logical rewrite ({@link ChunkSplit}): a projection right above a catalog
 * table's scan narrows the scan to the columns it reads, so that a query acquires only those
 * ({@link Catalog}) and a column no query reads may stay spilled to host memory.
 */
final class ScanColumns {
  private ScanColumns() {}

  /** {@code logical} with the scans below projections narrowed, and those below aggregates that read no column emptied. */
  static RelNode apply(RelNode logical) {
    return logical.accept(new RelShuttleImpl() {
      @Override
      public RelNode visit(org.apache.calcite.rel.logical.LogicalAggregate aggregate) {
        RelNode input = aggregate.getInput();
        CatalogTable t = input instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
        boolean readsNothing = aggregate.getGroupSet().isEmpty()
            && aggregate.getAggCallList().stream().allMatch(c -> c.getArgList().isEmpty() && c.filterArg < 0);
        if (t == null || t.columns() != null || !readsNothing) {
          return super.visit(aggregate);
        }
        // COUNT(*): a scan of no columns, only its rows; a table kept in files answers from metadata
        return aggregate.copy(aggregate.getTraitSet(), List.of(narrowed((TableScan) input, t, new int[0])));
      }

      @Override
      public RelNode visit(LogicalProject project) {
        RelNode input = project.getInput();
        CatalogTable t = input instanceof TableScan scan ? scan.getTable().unwrap(CatalogTable.class) : null;
        if (t == null || t.columns() != null) {
          return super.visit(project);
        }
        int fields = input.getRowType().getFieldCount();
        ImmutableBitSet used = RelOptUtil.InputFinder.bits(project.getProjects(), null);
        // a scan keeps one column, whose length is the row count (SELECT COUNT(*))
        int[] read = used.isEmpty() ? new int[] {0} : used.toArray();
        if (read.length == fields) {
          return project;
        }
        Mapping mapping = Mappings.create(MappingType.INVERSE_SURJECTION, fields, read.length);
        for (int i = 0; i < read.length; i++) {
          mapping.set(read[i], i);
        }
        RelNode scan = narrowed((TableScan) input, t, read);
        RexPermuteInputsShuttle permute = new RexPermuteInputsShuttle(mapping, scan);
        List<RexNode> exprs = project.getProjects().stream().map(e -> e.accept(permute)).toList();
        if (RexUtil.isIdentity(exprs, scan.getRowType())
            && project.getRowType().getFieldNames().equals(scan.getRowType().getFieldNames())) {
          return scan;
        }
        return project.copy(project.getTraitSet(), scan, exprs, project.getRowType());
      }
    });
  }

  /** A scan of columns {@code read} of {@code scan}'s catalog table {@code t}. */
  private static RelNode narrowed(TableScan scan, CatalogTable t, int[] read) {
    RelOptTable table = scan.getTable();
    CatalogTable narrowed = t.project(read);
    org.apache.calcite.rel.type.RelDataType rowType = narrowed.getRowType(scan.getCluster().getTypeFactory());
    // the columns are part of the name: planners tell scans apart by their table's name alone
    List<String> name = new java.util.ArrayList<>(table.getQualifiedName());
    name.add("columns: " + String.join(", ", rowType.getFieldNames()));
    RelOptTable narrowedTable = RelOptTableImpl.create(table.getRelOptSchema(), rowType, name, narrowed,
        (org.apache.calcite.linq4j.tree.Expression) null);
    return LogicalTableScan.create(scan.getCluster(), narrowedTable, scan.getHints());
  }
}
