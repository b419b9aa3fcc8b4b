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

  /**
   * A column that only a filter below a join reads (TPC-H q13's comment) is dropped right above
   * the filter, so neither the filter's compaction nor the join's gather writes it. (At run time
   * the join also skips {@code u.id}, which its projection does not read; the plan does not show
   * that, {@code JoinTest} checks it.)
   */
  @Test
  void aColumnOnlyAFilterBelowAJoinReadsIsDroppedAboveTheFilter() {
    plan("SELECT t.id, u.qty FROM t JOIN u ON t.id = u.id WHERE t.name NOT LIKE '%x%'",
        "GpuProject(id=[$0], qty=[$2])",
        "  GpuJoin(condition=[=($0, $1)], joinType=[inner])",
        "    GpuProject(id=[$0])",
        "      GpuFilter(condition=[NOT(LIKE($1, '%x%'))])",
        "        GpuTableScan(table=[[t, columns: id, name]])",
        "    GpuTableScan(table=[[u, columns: id, qty]])");
  }

  /**
   * A correlated sub-query whose correlation sits in every branch of an OR (TPC-DS q41's shape)
   * joins on that key: the factor is pulled out of the OR, not left in a condition that pairs
   * every row with every row.
   */
  @Test
  void aKeyRepeatedInEveryBranchOfAnOrIsAJoinKey() {
    String plan = session.explain("SELECT DISTINCT name FROM t WHERE id BETWEEN 1 AND 10 AND (SELECT COUNT(*) FROM u"
        + " WHERE (u.name = t.name AND u.qty = 1) OR (u.name = t.name AND u.qty = 2)) > 0");
    java.util.regex.Matcher joins = java.util.regex.Pattern.compile("GpuJoin\\(condition=\\[([A-Z ]+)\\(").matcher(plan);
    int found = 0;
    while (joins.find()) {
      found++;
      org.junit.jupiter.api.Assertions.assertNotEquals("OR", joins.group(1), plan);
    }
    org.junit.jupiter.api.Assertions.assertTrue(found > 0 && plan.contains("GpuJoin(condition=[=("), plan);
  }

  @Test
  void windowsAndGroupingSets() {
    // two windows of one partition: one Window operator, run on the CPU twin (the plan says so)
    plan("SELECT * FROM (SELECT name, RANK() OVER (PARTITION BY name ORDER BY qty DESC) r, SUM(qty) OVER (PARTITION BY name) s "
        + "FROM t) WHERE r <= 2",
        "GpuFilter(condition=[<=($1, 2)])",
        "  GpuProject(name=[$1], r=[$2], s=[CASE(>($3, 0), $4, null:BIGINT)])",
        "    GpuWindow(window#0=[window(partition {1} order by [0 DESC] aggs [RANK()])], "
            + "window#1=[window(partition {1} aggs [COUNT($0), SUM($0)])])",
        "      GpuTableScan(table=[[t, columns: qty, name]])");
    plan("SELECT name, id, SUM(qty) AS total FROM t GROUP BY ROLLUP(name, id)",
        "GpuAggregate(group=[{0, 1}], groups=[[{0, 1}, {0}, {}]], total=[SUM($2)])",
        "  GpuProject(name=[$2], id=[$0], qty=[$1])",
        "    GpuTableScan(table=[[t]])");
  }

  @Test
  void whereJoinBecomesEquiJoin() {
    plan("SELECT t.name, SUM(u.qty) FROM t, u WHERE t.id = u.id AND u.qty > 1 GROUP BY t.name",
        "GpuAggregate(group=[{0}], sum=[SUM($1)])",
        "  GpuProject(name=[$1], qty0=[$3])",
        "    GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "      GpuTableScan(table=[[t, columns: id, name]])",
        "      GpuFilter(condition=[>($1, 1)])",
        "        GpuTableScan(table=[[u, columns: id, qty]])");
  }

  @Test
  void constantsAreFolded() {
    plan("SELECT id FROM t WHERE qty < 2 + 3",
        "GpuProject(id=[$0])",
        "  GpuFilter(condition=[<($1, 5)])",
        "    GpuTableScan(table=[[t, columns: id, qty]])");
  }

  /** A fact table with keys into two dimensions that also share a low-cardinality column. */
  private void starWithSharedColumn() {
    int facts = 20_000;
    int dims = 1_000;
    try (VectorSchemaRoot f = ints(new String[] {"a_id", "b_id"}, facts, (c, i) -> (i * (c == 0 ? 7 : 13)) % dims);
        VectorSchemaRoot a = ints(new String[] {"id", "grp"}, dims, (c, i) -> c == 0 ? i : i % 2);
        VectorSchemaRoot b = ints(new String[] {"id", "grp"}, dims, (c, i) -> c == 0 ? i : i % 2)) {
      session.catalog().register("f", f);
      session.catalog().register("a", a);
      session.catalog().register("b", b);
    }
  }

  private VectorSchemaRoot ints(String[] names, int rows, java.util.function.BinaryOperator<Integer> value) {
    List<FieldVector> vectors = new java.util.ArrayList<>();
    for (int c = 0; c < names.length; c++) {
      IntVector v = new IntVector(names[c], allocator);
      v.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        v.set(i, value.apply(c, i));
      }
      v.setValueCount(rows);
      vectors.add(v);
    }
    return new VectorSchemaRoot(vectors);
  }

  @Test
  void joinOrderFollowsMeasuredDistinctCounts() {
    starWithSharedColumn();
    // a.grp = b.grp pairs half of a with half of b (500,000 rows); the fact table joined to a
    // on its key first keeps 20,000: that join comes first, b joins on both of its conditions
    String sql = "SELECT COUNT(*) FROM f, a, b WHERE f.a_id = a.id AND f.b_id = b.id AND a.grp = b.grp";
    plan(sql,
        "GpuAggregate(group=[{}], count=[COUNT()])",
        "  GpuJoin(condition=[AND(=($1, $4), =($3, $5))], joinType=[inner])",
        "    GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "      GpuTableScan(table=[[f]])",
        "      GpuTableScan(table=[[a]])",
        "    GpuTableScan(table=[[b]])");
    long expected = 0;
    for (int i = 0; i < 20_000; i++) {
      expected += (i * 7 % 1000) % 2 == (i * 13 % 1000) % 2 ? 1 : 0;
    }
    try (VectorSchemaRoot r = session.query(sql)) {
      assertEquals(expected, ((BigIntVector) r.getVector(0)).get(0));
    }
    // new rows, new counts: with grp unique, a.grp = b.grp keeps 1,000 pairs and goes first
    try (VectorSchemaRoot a = ints(new String[] {"id", "grp"}, 1_000, (c, i) -> i);
        VectorSchemaRoot b = ints(new String[] {"id", "grp"}, 1_000, (c, i) -> i)) {
      session.catalog().replace("a", a);
      session.catalog().replace("b", b);
    }
    plan(sql,
        "GpuAggregate(group=[{}], count=[COUNT()])",
        "  GpuJoin(condition=[AND(=($1, $4), =($0, $2))], joinType=[inner])",
        "    GpuTableScan(table=[[f]])",
        "    GpuJoin(condition=[=($1, $3)], joinType=[inner])",
        "      GpuTableScan(table=[[a]])",
        "      GpuTableScan(table=[[b]])");
  }
  /** A filter's equality with a constant keeps one of the column's measured distinct values, not a fixed guess. */
  @Test
  void equalityFiltersKeepTheirMeasuredShare() {
    starWithSharedColumn();
    // a.id = 7 keeps 1 row of a (a guess keeps 150), b.grp = 1 keeps 500 of b (a guess: 150):
    // f joins a first, though the FROM clause names b first
    String sql = "SELECT COUNT(*) FROM f, b, a WHERE f.a_id = a.id AND f.b_id = b.id AND a.id = 7 AND b.grp = 1";
    plan(sql,
        "GpuAggregate(group=[{}], count=[COUNT()])",
        "  GpuProject(a_id=[$2], b_id=[$3], id=[$0], grp=[$1], id0=[$4])",
        "    GpuJoin(condition=[=($3, $0)], joinType=[inner])",
        "      GpuFilter(condition=[=($1, 1)])",
        "        GpuTableScan(table=[[b]])",
        "      GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "        GpuTableScan(table=[[f]])",
        "        GpuFilter(condition=[=($0, 7)])",
        "          GpuTableScan(table=[[a, columns: id]])");
    try (VectorSchemaRoot r = session.query(sql)) {
      // f.a_id = 7 for i = 1, 1001, ..., 19001, and each has b_id = 13, whose grp is 1
      assertEquals(20, ((BigIntVector) r.getVector(0)).get(0));
    }
    // the largest table's own filter is not counted (it would keep 20 rows, fewer than a's 1,000,
    // and put a on the probe side): f keeps the guess, 3,000 rows, and stays the probe side
    plan("SELECT COUNT(*) FROM f, a WHERE f.a_id = a.id AND f.b_id = 13",
        "GpuAggregate(group=[{}], count=[COUNT()])",
        "  GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "    GpuFilter(condition=[=($1, 13)])",
        "      GpuTableScan(table=[[f]])",
        "    GpuTableScan(table=[[a, columns: id]])");
  }

  /**
   * Groups joined to a few rows of another table on their key: the rows are reduced to those keys
   * before they are grouped; joined to all of it, they are not.
   */
  @Test
  void groupsJoinedToFewRowsAreReducedBeforeGrouping() {
    starWithSharedColumn();
    String few = "SELECT s.k, s.n FROM (SELECT a_id AS k, COUNT(*) AS n FROM f GROUP BY a_id) s JOIN a ON s.k = a.id"
        + " WHERE a.id = 7";
    plan(few,
        "GpuProject(k=[$0], n=[$1])",
        "  GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "    GpuAggregate(group=[{0}], n=[COUNT()])",
        "      GpuJoin(condition=[=($0, $1)], joinType=[semi])",
        "        GpuProject(k=[$0])",
        "          GpuTableScan(table=[[f, columns: a_id]])",
        "        GpuProject(id=[$0])",
        "          GpuFilter(condition=[=($0, 7)], shared=[#1])",
        "            GpuTableScan(table=[[a, columns: id]])",
        "    GpuFilter(shared=[#1])");
    try (VectorSchemaRoot r = session.query(few)) {
      // a_id = i * 7 % 1000 is 7 for i = 1, 1001, ..., 19001
      assertEquals("[7]", r.getVector(0).toString());
      assertEquals("[20]", r.getVector(1).toString());
    }
    plan("SELECT s.k, s.n FROM (SELECT a_id AS k, COUNT(*) AS n FROM f GROUP BY a_id) s JOIN a ON s.k = a.id",
        "GpuProject(k=[$0], n=[$1])",
        "  GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "    GpuAggregate(group=[{0}], n=[COUNT()])",
        "      GpuProject(k=[$0])",
        "        GpuTableScan(table=[[f, columns: a_id]])",
        "    GpuTableScan(table=[[a, columns: id]])");
  }

  /** Two reads of one table that read the same columns are one operator, which the query runs once. */
  @Test
  void equalSubtreesAreOneOperator() {
    plan("SELECT COUNT(*) FROM t a JOIN t b ON a.id = b.id WHERE a.qty > 1 AND b.qty > 1",
        "GpuAggregate(group=[{}], count=[COUNT()])",
        "  GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "    GpuFilter(condition=[>($1, 1)], shared=[#1])",
        "      GpuTableScan(table=[[t, columns: id, qty]])",
        "    GpuFilter(shared=[#1])");
  }

  /**
   * Filters on each joined table move into the join's inputs, also where the join's output passes
   * a projection first (column trimming puts one there).
   */
  @Test
  void filtersOnJoinedTablesMoveIntoTheJoinInputs() {
    plan("SELECT COUNT(*) FROM t a JOIN t b ON a.id = b.qty WHERE a.qty > 1 AND b.qty > 1",
        "GpuAggregate(group=[{}], count=[COUNT()])",
        "  GpuProject(qty=[$1], qty0=[$2])",
        "    GpuJoin(condition=[=($0, $3)], joinType=[inner])",
        "      GpuFilter(condition=[>($1, 1)])",
        "        GpuTableScan(table=[[t, columns: id, qty]])",
        "      GpuFilter(condition=[>($0, 1)])",
        "        GpuProject(qty=[$0], qty0=[CAST($0):BIGINT])",
        "          GpuTableScan(table=[[t, columns: qty]])");
  }

  /** A join per chunk: the other input, which every branch reads and which runs once, is written once. */
  @Test
  void aSharedInputIsWrittenOnce() {
    session.catalog().maxChunkRows(2);
    try (VectorSchemaRoot c = ints(new String[] {"k", "v"}, 2, (col, i) -> i);
        VectorSchemaRoot more = ints(new String[] {"k", "v"}, 2, (col, i) -> i + 2);
        VectorSchemaRoot d = ints(new String[] {"k"}, 3, (col, i) -> i)) {
      session.catalog().register("c", c);
      session.catalog().append("c", more);
      session.catalog().register("d", d);
    }
    String sql = "SELECT c.v FROM c JOIN d ON c.k = d.k";
    plan(sql,
        "GpuUnion(all=[true])",
        "  GpuProject(v=[$1])",
        "    GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "      GpuTableScan(table=[[c, chunk 0]])",
        "      GpuTableScan(table=[[d]], shared=[#1])",
        "  GpuProject(v=[$1])",
        "    GpuJoin(condition=[=($0, $2)], joinType=[inner])",
        "      GpuTableScan(table=[[c, chunk 1]])",
        "      GpuTableScan(shared=[#1])");
    try (VectorSchemaRoot r = session.query(sql)) {
      assertEquals("[0, 1, 2]", r.getVector(0).toString());
    }
  }

  /**
   * EXPLAIN as a statement, as SQL clients send it: DuckDB's and PostgreSQL's {@code EXPLAIN query}
   * and Calcite's {@code EXPLAIN PLAN FOR query}, after comments too, return the plan that {@link
   * GpuSession#explain} prints, one operator a row of a column {@code plan}; anything else that
   * EXPLAIN could mean is refused with a message that says what is supported, and a syntax error
   * after EXPLAIN keeps the user's position.
   */
  @Test
  void explainStatementsReturnThePlanAsRows() {
    String query = "SELECT id, qty * 2 AS q2 FROM t WHERE name LIKE 'a%' ORDER BY q2 DESC LIMIT 5";
    List<String> expected = session.explain(query).lines().toList();
    for (String sql : List.of("EXPLAIN " + query, "explain plan for " + query, "-- why slow?\n/* q */ EXPLAIN\n" + query,
        "EXPLAIN PLAN INCLUDING ATTRIBUTES WITH IMPLEMENTATION FOR " + query)) {
      assertEquals(true, session.returnsRows(sql), sql);
      try (VectorSchemaRoot r = session.query(sql)) {
        assertEquals(List.of("plan"), r.getSchema().getFields().stream().map(f -> f.getName()).toList(), sql);
        List<String> rows = new java.util.ArrayList<>();
        for (int i = 0; i < r.getRowCount(); i++) {
          rows.add(r.getVector(0).getObject(i).toString());
        }
        assertEquals(expected, rows, sql);
      }
    }
    assertEquals(4, expected.size());
    assertThrowsWith(dev.gpudf.columnar.error.NotSupportedException.class, "EXPLAIN ANALYZE is not supported",
        "EXPLAIN ANALYZE " + query);
    assertThrowsWith(dev.gpudf.columnar.error.NotSupportedException.class, "is not supported: EXPLAIN gives the plan as text",
        "EXPLAIN PLAN AS JSON FOR " + query);
    assertThrowsWith(dev.gpudf.columnar.error.NotSupportedException.class, "EXPLAIN takes a query (SELECT, WITH, VALUES), not insert",
        "EXPLAIN PLAN FOR INSERT INTO t SELECT * FROM u");
    // the position is the statement's own: column 20 is where FROM stands, after a dangling comma
    assertThrowsWith(dev.gpudf.columnar.error.UserException.class, "'FROM' at line 1, column 20", "EXPLAIN SELECT id, FROM t");
    assertThrowsWith(dev.gpudf.columnar.error.UserException.class, "run it as a query", "EXPLAIN " + query, true);
  }

  private void assertThrowsWith(Class<? extends RuntimeException> type, String message, String sql) {
    assertThrowsWith(type, message, sql, false);
  }

  private void assertThrowsWith(Class<? extends RuntimeException> type, String message, String sql, boolean asUpdate) {
    RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(type, () -> {
      if (asUpdate) {
        session.update(sql);
      } else {
        session.query(sql).close();
      }
    }, sql);
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains(message), sql + ": " + e.getMessage());
  }
}
