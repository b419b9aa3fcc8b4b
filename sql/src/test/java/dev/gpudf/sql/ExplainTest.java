package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Plan shapes: the physical plans of representative queries, as EXPLAIN prints them. */
class ExplainTest {
  private RootAllocator allocator;
  private GpuSession session;

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    BigIntVector id = new BigIntVector("id", allocator);
    IntVector qty = new IntVector("qty", allocator);
    VarCharVector name = new VarCharVector("name", allocator);
    for (FieldVector v : List.<FieldVector>of(id, qty, name)) {
      v.allocateNew();
      v.setValueCount(0);
    }
    try (VectorSchemaRoot r = new VectorSchemaRoot(List.<FieldVector>of(id, qty, name))) {
      session.catalog().register("t", r);
      session.catalog().register("u", r);
    }
  }

  @AfterEach
  void close() {
    session.close();
    allocator.close();
  }

  private void plan(String sql, String... lines) {
    assertEquals(String.join("\n", lines) + "\n", session.explain(sql), sql);
  }

  @Test
  void filterProjectSortLimit() {
    plan("SELECT id, qty * 2 AS q2 FROM t WHERE name LIKE 'a%' ORDER BY q2 DESC LIMIT 5",
        "GpuSort(sort0=[$1], dir0=[DESC], fetch=[5])",
        "  GpuProject(id=[$0], q2=[*($1, 2)])",
        "    GpuFilter(condition=[LIKE($2, 'a%')])",
        "      GpuTableScan(table=[[t]])");
  }

  @Test
  void whereJoinBecomesEquiJoin() {
    plan("SELECT t.name, SUM(u.qty) FROM t, u WHERE t.id = u.id AND u.qty > 1 GROUP BY t.name",
        "GpuAggregate(group=[{0}], EXPR$1=[SUM($1)])",
        "  GpuProject(name=[$1], qty0=[$3])",
        "    GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "      GpuProject(id=[$0], name=[$2])",
        "        GpuTableScan(table=[[t]])",
        "      GpuFilter(condition=[>($1, 1)])",
        "        GpuProject(id=[$0], qty=[$1])",
        "          GpuTableScan(table=[[u]])");
  }

  @Test
  void constantsAreFolded() {
    plan("SELECT id FROM t WHERE qty < 2 + 3",
        "GpuProject(id=[$0])",
        "  GpuFilter(condition=[<($1, 5)])",
        "    GpuProject(id=[$0], qty=[$1])",
        "      GpuTableScan(table=[[t]])");
  }
}
