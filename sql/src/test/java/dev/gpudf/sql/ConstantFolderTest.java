package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.avatica.util.TimeUnit;
import org.apache.calcite.jdbc.JavaTypeFactoryImpl;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.SqlIntervalQualifier;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.calcite.util.DateString;
import org.junit.jupiter.api.Test;

/** {@link ConstantFolder} against Calcite's own executor, the folder it replaces, on the constants queries hold. */
class ConstantFolderTest {
  private final RelDataTypeFactory types = new JavaTypeFactoryImpl(GpudfTypeSystem.INSTANCE);
  private final RexBuilder b = new RexBuilder(types);

  private RexNode dec(String v) {
    return b.makeExactLiteral(new BigDecimal(v));
  }

  private RexNode i(long v) {
    return b.makeExactLiteral(BigDecimal.valueOf(v), types.createSqlType(SqlTypeName.INTEGER));
  }

  private RexNode date(String v) {
    return b.makeDateLiteral(new DateString(v));
  }

  private RexNode days(int n) {
    return b.makeIntervalLiteral(BigDecimal.valueOf(n * 86_400_000L),
        new SqlIntervalQualifier(TimeUnit.DAY, null, SqlParserPos.ZERO));
  }

  private RexNode months(int n) {
    return b.makeIntervalLiteral(BigDecimal.valueOf(n), new SqlIntervalQualifier(TimeUnit.MONTH, null, SqlParserPos.ZERO));
  }

  private RexNode call(org.apache.calcite.sql.SqlOperator op, RexNode... args) {
    return b.makeCall(op, args);
  }

  private RexNode cast(RelDataType t, RexNode e) {
    return b.makeCast(t, e);
  }

  /**
   * The folded dates above, in order. Calcite's executor is no reference for these: it leaves most
   * unfolded when built as here, and takes a month from 2000-03-31 as a day (2000-03-30).
   */
  private static final List<String> DATES = List.of("1998-09-02", "1995-01-01", "1996-02-29", "1995-10-01", "2000-02-29");

  /** The constants of the families TPC-H, TPC-DS and analysts write; each folded by gpudf. */
  private List<RexNode> family() {
    RelDataType decimal152 = types.createSqlType(SqlTypeName.DECIMAL, 15, 2);
    RelDataType varchar = types.createSqlType(SqlTypeName.VARCHAR, 20);
    List<RexNode> es = new ArrayList<>();
    // dates: TPC-H's q1, q4, q5, q6 and the like (answers in DATES)
    es.add(call(SqlStdOperatorTable.MINUS, date("1998-12-01"), days(90)));
    es.add(call(SqlStdOperatorTable.DATETIME_PLUS, date("1994-01-01"), months(12)));
    es.add(call(SqlStdOperatorTable.DATETIME_PLUS, date("1996-01-31"), months(1)));
    es.add(call(SqlStdOperatorTable.DATETIME_PLUS, date("1995-09-01"), days(30)));
    es.add(call(SqlStdOperatorTable.MINUS, date("2000-03-31"), months(1)));
    es.add(cast(types.createSqlType(SqlTypeName.DATE), b.makeLiteral("2000-02-29")));
    // decimals: q6's bounds, products, quotients, casts that round
    es.add(call(SqlStdOperatorTable.MINUS, dec("0.06"), dec("0.01")));
    es.add(call(SqlStdOperatorTable.PLUS, dec("0.06"), dec("0.01")));
    es.add(call(SqlStdOperatorTable.MULTIPLY, dec("1.5"), dec("-2.25")));
    es.add(call(SqlStdOperatorTable.MINUS, i(1), dec("0.05")));
    es.add(cast(decimal152, dec("12.3")));
    es.add(cast(decimal152, dec("-12.34")));
    es.add(cast(decimal152, i(7)));
    // integers and booleans
    es.add(call(SqlStdOperatorTable.PLUS, i(2_000_000_000), i(7)));
    es.add(call(SqlStdOperatorTable.MULTIPLY, i(-3), i(11)));
    es.add(call(SqlStdOperatorTable.MOD, i(-7), i(3)));
    es.add(call(SqlStdOperatorTable.LESS_THAN, i(3), i(4)));
    es.add(call(SqlStdOperatorTable.AND, b.makeLiteral(true), call(SqlStdOperatorTable.GREATER_THAN, dec("1.10"), dec("1.1"))));
    es.add(call(SqlStdOperatorTable.OR, b.makeNullLiteral(types.createSqlType(SqlTypeName.BOOLEAN)), b.makeLiteral(true)));
    es.add(call(SqlStdOperatorTable.CASE, call(SqlStdOperatorTable.EQUALS, i(1), i(2)), i(10), i(20)));
    // NULLs
    es.add(call(SqlStdOperatorTable.PLUS, i(1), b.makeNullLiteral(types.createSqlType(SqlTypeName.INTEGER))));
    // strings, non-ASCII among them
    es.add(call(SqlStdOperatorTable.UPPER, cast(varchar, b.makeLiteral("zürich"))));
    es.add(call(SqlStdOperatorTable.CONCAT, cast(varchar, b.makeLiteral("日本")), cast(varchar, b.makeLiteral("語"))));
    es.add(call(SqlStdOperatorTable.SUBSTRING, cast(varchar, b.makeLiteral("naïve café")), i(3), i(4)));
    es.add(call(SqlStdOperatorTable.CHAR_LENGTH, cast(varchar, b.makeLiteral("naïve"))));
    return es;
  }

  @Test
  void foldsAsCalcitesExecutorDoes() {
    List<RexNode> es = family();
    List<RexNode> mine = new ArrayList<>();
    List<RexNode> calcite = new ArrayList<>();
    long delegatedBefore = ConstantFolder.delegated();
    long foldedBefore = ConstantFolder.folded();
    ConstantFolder.INSTANCE.reduce(b, es, mine);
    // one at a time: where one expression of a batch fails, Calcite's executor leaves the whole batch
    for (RexNode e : es) {
      List<RexNode> one = new ArrayList<>();
      RexUtil.EXECUTOR.reduce(b, List.of(e), one);
      calcite.add(one.get(0));
    }
    assertEquals(es.size(), mine.size());
    for (int k = 0; k < es.size(); k++) {
      // a literal, or a literal cast to a nullable type, as Calcite's executor makes them
      assertTrue(RexUtil.isLiteral(mine.get(k), true), es.get(k) + " folded to " + mine.get(k));
      assertEquals(es.get(k).getType(), mine.get(k).getType(), es.get(k) + ": type");
      if (k < DATES.size()) {
        assertEquals(DATES.get(k), mine.get(k).toString(), es.get(k).toString());
      } else {
        assertTrue(RexUtil.isLiteral(calcite.get(k), true), es.get(k) + " is left unfolded by Calcite's executor");
        assertEquals(calcite.get(k).toString(), mine.get(k).toString(), es.get(k).toString());
      }
    }
    assertEquals(es.size(), ConstantFolder.folded() - foldedBefore, "folded by gpudf's evaluator");
    assertEquals(0, ConstantFolder.delegated() - delegatedBefore, "left to Calcite's executor");
  }

  @Test
  void anExpressionThatFailsStaysForRunTime() {
    RexNode divide = call(SqlStdOperatorTable.DIVIDE, i(1), i(0));
    RexNode overflow = call(SqlStdOperatorTable.MULTIPLY, i(2_000_000_000), i(2));
    List<RexNode> out = new ArrayList<>();
    ConstantFolder.INSTANCE.reduce(b, List.of(divide, overflow, i(5)), out);
    assertSame(divide, out.get(0));
    assertSame(overflow, out.get(1));
    assertEquals("5", out.get(2).toString());
  }

  @Test
  void typesItDoesNotFoldGoToCalcite() {
    // CHAR keeps Calcite's padding rules
    RexNode chars = call(SqlStdOperatorTable.UPPER, b.makeLiteral("abc"));
    long before = ConstantFolder.delegated();
    List<RexNode> out = new ArrayList<>();
    ConstantFolder.INSTANCE.reduce(b, List.of(chars), out);
    assertEquals(1, ConstantFolder.delegated() - before);
    assertEquals("'ABC'", out.get(0).toString());
  }

  /**
   * A constant has the value the same expression over a column holding the same value has, and
   * DuckDB's: Calcite's executor truncated where gpudf and DuckDB round (CAST(12.345 AS
   * DECIMAL(15, 2)) was 12.34, CAST(12.5 AS INTEGER) 12, over a column 12.35 and 13) and divided a
   * decimal into a double of 16 digits (7.000 / 3 was 2.333333333333333, over a column 2.3333333333333335).
   */
  @Test
  void aConstantHasTheValueItsColumnHasAndDuckDbs() throws Exception {
    List<String> values = List.of("12.345", "-12.345", "12.5", "-12.5", "0.005", "-0.005", "99999.995", "7.000");
    List<String> shapes = List.of("CAST(%s AS DECIMAL(15, 2))", "CAST(%s AS DECIMAL(6, 1))", "CAST(%s AS INTEGER)",
        "CAST(%s AS BIGINT)", "CAST(%s AS SMALLINT)", "%s * 3", "%s / 3", "CAST(%s AS DOUBLE) * 0.1", "%s + 0.0005", "-%s", "ABS(%s)", "%s > 12.3",
        "CASE WHEN %s < 0 THEN 'neg' ELSE 'pos' END", "CAST(CAST(%s AS DECIMAL(15, 2)) AS VARCHAR)");
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a);
        java.sql.Connection duck = java.sql.DriverManager.getConnection("jdbc:duckdb:")) {
      s.update("CREATE TABLE t (k INTEGER, v DECIMAL(10, 3))");
      for (int k = 0; k < values.size(); k++) {
        s.update("INSERT INTO t VALUES (" + k + ", " + values.get(k) + ")");
      }
      for (String shape : shapes) {
        for (int k = 0; k < values.size(); k++) {
          String literal = "CAST(" + values.get(k) + " AS DECIMAL(10, 3))";
          String folded = one(s, "SELECT " + shape.formatted(literal) + " AS x");
          String column = one(s, "SELECT " + shape.formatted("v") + " AS x FROM t WHERE k + 0 = " + k);
          assertEquals(column, folded, shape.formatted(values.get(k)) + ": a constant against a column");
          String duckdb;
          // a statement of its own each time: DuckDB's is closed by a failed query
          try (java.sql.Statement st = duck.createStatement(); java.sql.ResultSet r = st.executeQuery("SELECT " + shape.formatted(literal))) {
            r.next();
            duckdb = r.getString(1);
          } catch (java.sql.SQLException e) {
            duckdb = "error";
          }
          assertEquals(normal(duckdb), normal(folded), shape.formatted(values.get(k)) + ": against DuckDB");
        }
      }
    }
  }

  /** The one value {@code sql} gives, as text; "error" where it fails as a user error (an overflow, say). */
  private static String one(GpuSession s, String sql) {
    try (VectorSchemaRoot r = s.query(sql)) {
      assertEquals(1, r.getRowCount(), sql);
      return String.valueOf(r.getVector(0).getObject(0));
    } catch (dev.gpudf.columnar.error.UserException e) {
      return "error";
    }
  }

  /** A number without trailing zeros, a boolean as itself, anything else as it is. */
  private static String normal(String v) {
    try {
      return new BigDecimal(v).stripTrailingZeros().toPlainString();
    } catch (NumberFormatException notANumber) {
      return v;
    }
  }

  /** The constants of TPC-H's 22 queries are all folded without Calcite's executor, and the answers stand. */
  @Test
  void tpchPlansFoldEveryConstantThemselves() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      TpchTables.loadAll(s.catalog(), 0.01, a);
      long delegatedBefore = ConstantFolder.delegated();
      long foldedBefore = ConstantFolder.folded();
      for (String q : TpchTables.queries(0.01).values()) {
        s.explain(q);
      }
      assertTrue(ConstantFolder.folded() - foldedBefore >= 10, "constants folded: " + (ConstantFolder.folded() - foldedBefore));
      assertEquals(0, ConstantFolder.delegated() - delegatedBefore, "constants left to Calcite's executor");
      try (VectorSchemaRoot r = s.query("SELECT CASE WHEN n_nationkey > 100 THEN 1 / 0 ELSE 1 END AS x FROM nation")) {
        assertEquals(25, r.getRowCount());
      }
    }
  }
}
