package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.trino.tpch.TpchTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.plan.hep.HepPlanner;
import org.apache.calcite.plan.hep.HepProgram;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.metadata.RelMetadataQuery;
import org.apache.calcite.util.ImmutableBitSet;
import org.junit.jupiter.api.Test;

/**
 * gpudf's metadata handlers ({@link MetadataHandlers}) answer as Calcite's default, generated
 * ones do, and keep their answers in the query as those do.
 */
class MetadataHandlersTest {
  /** What the planner's rules and gpudf's join order ask of a plan, as text. */
  private static List<String> answers(RelMetadataQuery mq, RelNode rel) {
    ImmutableBitSet first = ImmutableBitSet.of(0);
    int last = rel.getRowType().getFieldCount() - 1;
    // the same questions of other columns: an answer kept under the wrong arguments shows
    ImmutableBitSet all = ImmutableBitSet.range(last + 1);
    return List.of(
        String.valueOf(mq.getRowCount(rel)),
        String.valueOf(mq.getMaxRowCount(rel)),
        String.valueOf(mq.getPulledUpPredicates(rel).pulledUpPredicates),
        String.valueOf(mq.collations(rel)),
        String.valueOf(mq.getUniqueKeys(rel)),
        String.valueOf(mq.areColumnsUnique(rel, first)),
        String.valueOf(mq.getDistinctRowCount(rel, first, null)),
        String.valueOf(mq.getSelectivity(rel, null)),
        String.valueOf(mq.getColumnOrigins(rel, 0)),
        String.valueOf(mq.areColumnsUnique(rel, all)),
        String.valueOf(mq.getDistinctRowCount(rel, all, null)),
        String.valueOf(mq.getColumnOrigins(rel, last)));
  }

  private static void nodes(RelNode rel, List<RelNode> out) {
    out.add(rel);
    rel.getInputs().forEach(i -> nodes(i, out));
  }

  @Test
  void everyTpchPlanGetsTheDefaultProvidersAnswers() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        try (VectorSchemaRoot r = TpchTables.arrow(allocator, t, 0.001)) {
          s.catalog().register(t.getTableName(), r);
        }
      }
      int compared = 0;
      for (Map.Entry<String, String> q : TpchTables.queries().entrySet()) {
        List<RelNode> all = new ArrayList<>();
        nodes(s.plan(q.getValue()), all);
        RelMetadataQuery ours = MetadataHandlers.query();
        RelMetadataQuery calcites = RelMetadataQuery.instance();
        for (RelNode rel : all) {
          assertEquals(answers(calcites, rel), answers(ours, rel), q.getKey() + ": " + rel.getRelTypeName());
          compared++;
        }
      }
      assertTrue(compared > 200, compared + " operators compared");
    }
  }

  @Test
  void answersAreKeptInTheQueryAndReadThroughPlannerVertices() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      try (VectorSchemaRoot r = TpchTables.arrow(allocator, TpchTable.NATION, 1)) {
        s.catalog().register("nation", r);
      }
      RelNode plan = s.plan("SELECT n_name FROM nation WHERE n_regionkey = 1 AND n_nationkey > 3");
      List<RelNode> all = new ArrayList<>();
      nodes(plan, all);
      RelNode filter = all.stream().filter(n -> n instanceof Filter).findFirst().orElseThrow();
      RelMetadataQuery mq = MetadataHandlers.query();
      Object predicates = mq.getPulledUpPredicates(filter);
      assertFalse(mq.map.row(filter).isEmpty(), "the answer is kept");
      assertSame(predicates, mq.getPulledUpPredicates(filter), "asked again, the kept answer");
      assertFalse(mq.getPulledUpPredicates(filter).pulledUpPredicates.isEmpty());

      // a Hep planner's vertex answers for the operator it holds
      HepPlanner hep = new HepPlanner(HepProgram.builder().build());
      hep.setRoot(filter);
      RelNode vertex = hep.getRoot();
      assertNotNull(vertex);
      assertEquals(answers(RelMetadataQuery.instance(), filter), answers(MetadataHandlers.query(), vertex));
    }
  }
}
