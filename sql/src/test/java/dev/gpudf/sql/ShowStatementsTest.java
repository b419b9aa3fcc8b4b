package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * SHOW TABLES and DESCRIBE ({@link ShowStatements}) answer as queries, with the catalog as it is
 * when they run: tables added later are listed, hidden ones never; a table's columns with their
 * SQL types and nullability, a query's result columns; an unknown table, or something that is
 * neither a name nor a query, is a user error naming it, and a query's error keeps its position
 * in the statement.
 */
class ShowStatementsTest {
  private static List<String> rows(GpuSession s, String sql) {
    assertTrue(s.returnsRows(sql), sql);
    try (VectorSchemaRoot r = s.query(sql)) {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < r.getRowCount(); i++) {
        List<String> row = new ArrayList<>();
        for (int c = 0; c < r.getFieldVectors().size(); c++) {
          row.add(String.valueOf(r.getVector(c).getObject(i)));
        }
        out.add(String.join("|", row));
      }
      return out;
    }
  }

  @Test
  void showTablesAndDescribeAnswerFromTheCatalog() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      assertEquals(List.of(), rows(s, "SHOW TABLES"));
      s.update("CREATE TABLE t (id BIGINT NOT NULL, price DECIMAL(10,2), name VARCHAR(12), PRIMARY KEY (id))");
      s.update("CREATE TABLE \"It's\" (d DATE)");
      try (org.apache.arrow.vector.BigIntVector v = new org.apache.arrow.vector.BigIntVector("v", allocator);
          VectorSchemaRoot hidden = VectorSchemaRoot.of(v)) {
        s.catalog().registerHidden(hidden);
      }
      assertEquals(List.of("it's", "t"), rows(s, "show tables;"));
      List<String> columns = List.of("id|BIGINT|NO", "price|DECIMAL(10, 2)|YES", "name|VARCHAR(12)|YES");
      assertEquals(columns, rows(s, "DESCRIBE t"));
      assertEquals(columns, rows(s, "DESC TABLE T"));
      assertEquals(List.of("d|DATE|YES"), rows(s, "DESCRIBE \"it's\""));
      // blanks from a client are untrusted too: a long run of them is read once, not once per character
      String padded = "DESC " + " ".repeat(400_000) + "t" + " ".repeat(400_000) + ";";
      String inside = "DESC t" + " ".repeat(400_000) + "x";
      org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(20), () -> {
        assertEquals(columns, rows(s, padded));
        assertTrue(assertThrows(UserException.class, () -> s.query(inside).close()).getMessage()
            .contains("DESCRIBE takes a table name or a query, not 't     "));
      });
      // a query's columns as its result types them (the catalog's columns are nullable to the planner)
      assertEquals(List.of("twice|BIGINT|YES", "n|BIGINT|NO"), rows(s, "DESCRIBE SELECT id * 2 AS twice, COUNT(*) AS n FROM t GROUP BY id"));
      try (VectorSchemaRoot r = s.query("DESCRIBE t")) {
        assertEquals(List.of("column_name", "column_type", "null"), r.getSchema().getFields().stream().map(f -> f.getName()).toList());
      }
      s.update("CREATE TABLE later (x INTEGER)");
      assertEquals(List.of("it's", "later", "t"), rows(s, "SHOW TABLES"));
      assertTrue(assertThrows(UserException.class, () -> s.query("DESCRIBE nosuch").close()).getMessage().contains("no table 'nosuch'"));
      assertTrue(assertThrows(UserException.class, () -> s.query("DESCRIBE t x").close()).getMessage()
          .contains("DESCRIBE takes a table name or a query, not 't x'"));
      assertTrue(assertThrows(UserException.class, () -> s.query("DESCRIBE SELECT nope FROM t").close()).getMessage()
          .contains("line 1, column 17"));
      assertTrue(assertThrows(UserException.class, () -> s.update("SHOW TABLES")).getMessage().contains("run it as a query"));
    }
  }

  /**
   * The answers are rows, not the text of a query: a table of 5,000 columns (whose VALUES text
   * would pass a statement's size limit) and names beyond Latin-1 are described whole.
   */
  @Test
  void wideTablesAndAnyNamesAreDescribedWhole() {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      int n = 5_000;
      s.update("CREATE TABLE wide (" + String.join(", ", java.util.stream.IntStream.range(0, n).mapToObj(i -> "c" + i + " INTEGER").toList()) + ")");
      s.update("CREATE TABLE \"日本's\" (\"列\" VARCHAR)");
      List<String> wide = rows(s, "DESCRIBE wide");
      assertEquals(n, wide.size());
      assertEquals("c0|INTEGER|YES", wide.get(0));
      assertEquals("c4999|INTEGER|YES", wide.get(n - 1));
      assertEquals(List.of("列|VARCHAR|YES"), rows(s, "DESCRIBE \"日本's\""));
      assertEquals(List.of("wide", "日本's"), rows(s, "SHOW TABLES"));
    }
  }
}
