package dev.gpudf.sql;

import static dev.gpudf.sql.Agg.avg;
import static dev.gpudf.sql.Agg.count;
import static dev.gpudf.sql.Agg.sum;
import static dev.gpudf.sql.Col.col;
import static dev.gpudf.sql.Col.date;
import static dev.gpudf.sql.Col.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.error.UserException;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.dataset.file.DatasetFileWriter;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.calcite.rel.core.JoinRelType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** TPC-H queries written with the DataFrame API give what their SQL text gives, in one session. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DataFrameTest {
  private RootAllocator allocator;
  private GpuSession session;

  @BeforeAll
  void load() {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    for (TpchTable<?> t : List.of(TpchTable.LINE_ITEM, TpchTable.ORDERS, TpchTable.CUSTOMER,
        TpchTable.SUPPLIER, TpchTable.NATION, TpchTable.REGION)) {
      try (VectorSchemaRoot r = TpchTables.arrow(allocator, t, 0.01)) {
        session.catalog().register(t.getTableName(), r);
      }
    }
  }

  @AfterAll
  void close() {
    session.close();
    allocator.close();
  }

  private static void assertSameRows(VectorSchemaRoot want, VectorSchemaRoot got) {
    assertEquals(want.getRowCount(), got.getRowCount(), "rows");
    assertEquals(want.getFieldVectors().size(), got.getFieldVectors().size(), "columns");
    for (int c = 0; c < want.getFieldVectors().size(); c++) {
      for (int i = 0; i < want.getRowCount(); i++) {
        Object w = want.getVector(c).getObject(i);
        Object g = got.getVector(c).getObject(i);
        if (w instanceof BigDecimal bw && g instanceof BigDecimal bg) {
          assertEquals(0, bw.compareTo(bg), "row " + i + " column " + c);
        } else if (w instanceof Double dw && g instanceof Double dg) {
          assertEquals(dw, dg, 1e-9 * Math.max(1, Math.abs(dw)), "row " + i + " column " + c);
        } else {
          assertEquals(String.valueOf(w), String.valueOf(g), "row " + i + " column " + c);
        }
      }
    }
  }

  private void same(String sql, DataFrame df) {
    same(sql, df, session);
  }

  private static void same(String sql, DataFrame df, GpuSession session) {
    try (VectorSchemaRoot want = session.query(sql); VectorSchemaRoot got = df.toArrow()) {
      assertTrue(want.getRowCount() > 0, "the query selects nothing: " + sql);
      assertSameRows(want, got);
    }
  }

  /** Window functions as frames (WindowSpec, Agg.over) give what the same SQL gives. */
  @Test
  void windowFunctions() {
    WindowSpec byCustomer = WindowSpec.partitionBy(col("o_custkey")).orderBy(col("o_orderdate"), col("o_orderkey"));
    same("SELECT o_orderkey, o_custkey, ROW_NUMBER() OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey) AS rn, "
        + "RANK() OVER (PARTITION BY o_orderstatus ORDER BY o_totalprice DESC) AS r, "
        + "SUM(o_totalprice) OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey "
        + "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS last3, "
        + "LAG(o_orderdate, 1) OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey) AS previous "
        + "FROM orders WHERE o_custkey < 200 ORDER BY o_orderkey",
        session.table("orders").filter(col("o_custkey").lt(lit(200)))
            .withColumn("rn", Agg.rowNumber().over(byCustomer))
            .withColumn("r", Agg.rank().over(WindowSpec.partitionBy(col("o_orderstatus")).orderBy(col("o_totalprice").desc())))
            .withColumn("last3", Agg.sum(col("o_totalprice")).over(byCustomer.rowsBetween(-2, WindowSpec.CURRENT_ROW)))
            .withColumn("previous", Agg.lag(col("o_orderdate"), 1).over(byCustomer))
            .select(col("o_orderkey"), col("o_custkey"), col("rn"), col("r"), col("last3"), col("previous"))
            .orderBy(col("o_orderkey")));
  }

  @Test
  void q1() {
    Col price = col("l_extendedprice");
    Col disc = col("l_discount");
    same(TpchTables.queries().get("q1"), session.table("lineitem")
        .filter(col("l_shipdate").le(date("1998-09-02")))
        .groupBy("l_returnflag", "l_linestatus")
        .agg(sum(col("l_quantity")).as("sum_qty"), sum(price).as("sum_base_price"),
            sum(price.times(lit(1).minus(disc))).as("sum_disc_price"),
            sum(price.times(lit(1).minus(disc)).times(lit(1).plus(col("l_tax")))).as("sum_charge"),
            avg(col("l_quantity")).as("avg_qty"), avg(price).as("avg_price"), avg(disc).as("avg_disc"),
            count().as("count_order"))
        .orderBy(col("l_returnflag"), col("l_linestatus")));
  }

  @Test
  void q3() {
    DataFrame customer = session.table("customer").filter(col("c_mktsegment").eq(lit("BUILDING")));
    same(TpchTables.queries().get("q3"), customer
        .join(session.table("orders"), col("c_custkey").eq(col("o_custkey")), JoinRelType.INNER)
        .join(session.table("lineitem"), col("o_orderkey").eq(col("l_orderkey")), JoinRelType.INNER)
        .filter(col("o_orderdate").lt(date("1995-03-15")).and(col("l_shipdate").gt(date("1995-03-15"))))
        .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
        .agg(sum(col("l_extendedprice").times(lit(1).minus(col("l_discount")))).as("revenue"))
        .select(col("l_orderkey"), col("revenue"), col("o_orderdate"), col("o_shippriority"))
        .orderBy(col("revenue").desc(), col("o_orderdate"), col("l_orderkey"))
        .limit(10));
  }

  @Test
  void q5() {
    DataFrame asia = session.table("region").filter(col("r_name").eq(lit("ASIA")));
    Col revenue = col("l_extendedprice").times(lit(1).minus(col("l_discount")));
    same(TpchTables.queries().get("q5"), session.table("customer")
        .join(session.table("orders"), col("c_custkey").eq(col("o_custkey")), JoinRelType.INNER)
        .filter(col("o_orderdate").ge(date("1994-01-01")).and(col("o_orderdate").lt(date("1995-01-01"))))
        .join(session.table("lineitem"), col("o_orderkey").eq(col("l_orderkey")), JoinRelType.INNER)
        .join(session.table("supplier"), col("l_suppkey").eq(col("s_suppkey")).and(col("c_nationkey").eq(col("s_nationkey"))), JoinRelType.INNER)
        .join(session.table("nation"), col("s_nationkey").eq(col("n_nationkey")), JoinRelType.INNER)
        .join(asia, col("n_regionkey").eq(col("r_regionkey")), JoinRelType.INNER)
        .groupBy("n_name")
        .agg(sum(revenue).as("revenue"))
        .orderBy(col("revenue").desc()));
  }

  @Test
  void q10() {
    Col revenue = col("l_extendedprice").times(lit(1).minus(col("l_discount")));
    same(TpchTables.queries().get("q10"), session.table("customer")
        .join(session.table("orders"), col("c_custkey").eq(col("o_custkey")), JoinRelType.INNER)
        .filter(col("o_orderdate").ge(date("1993-10-01")).and(col("o_orderdate").lt(date("1994-01-01"))))
        .join(session.table("lineitem").filter(col("l_returnflag").eq(lit("R"))), col("o_orderkey").eq(col("l_orderkey")), JoinRelType.INNER)
        .join(session.table("nation"), col("c_nationkey").eq(col("n_nationkey")), JoinRelType.INNER)
        .groupBy("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(sum(revenue).as("revenue"))
        .select(col("c_custkey"), col("c_name"), col("revenue"), col("c_acctbal"), col("n_name"), col("c_address"),
            col("c_phone"), col("c_comment"))
        .orderBy(col("revenue").desc(), col("c_custkey"))
        .limit(20));
  }

  @Test
  void renamedColumnsAndTablesMadeFromFrames() {
    DataFrame n = session.table("nation").withColumnRenamed("n_name", "nation").select(col("n_nationkey"), col("nation"));
    assertEquals(List.of("n_nationkey", "nation"), n.columns());
    assertThrows(UserException.class, () -> session.table("nation").withColumnRenamed("n_nam", "x"));
    session.createTable("asia_nations", session.table("nation")
        .join(session.table("region").filter(col("r_name").eq(lit("ASIA"))), col("n_regionkey").eq(col("r_regionkey")), JoinRelType.INNER)
        .select(col("n_name")));
    same("SELECT n_name FROM nation, region WHERE n_regionkey = r_regionkey AND r_name = 'ASIA' ORDER BY n_name",
        session.table("asia_nations").orderBy(col("n_name")));
  }

  @Test
  void q6() {
    same(TpchTables.queries().get("q6"), session.table("lineitem")
        .filter(col("l_shipdate").ge(date("1994-01-01")).and(col("l_shipdate").lt(date("1995-01-01")))
            .and(col("l_discount").ge(lit(new BigDecimal("0.05")))).and(col("l_discount").le(lit(new BigDecimal("0.07"))))
            .and(col("l_quantity").lt(lit(24))))
        .groupBy()
        .agg(sum(col("l_extendedprice").times(col("l_discount"))).as("revenue")));
  }

  @Test
  void columnsCaseDistinctUnion() {
    DataFrame orders = session.table("orders");
    DataFrame flagged = orders.withColumn("late", Col.when(col("o_orderdate").gt(date("1997-01-01")), lit(true))
            .otherwise(lit(false)))
        .withColumn("year", col("o_orderdate").year())
        .withColumn("code", col("o_orderpriority").substring(1, 1))
        .drop("o_comment", "o_clerk");
    assertEquals(List.of("o_orderkey", "o_custkey", "o_orderstatus", "o_totalprice", "o_orderdate", "o_orderpriority",
        "o_shippriority", "late", "year", "code"), flagged.columns());
    same("select count(*), sum(case when o_orderdate > date '1997-01-01' then 1 else 0 end) from orders",
        flagged.groupBy().agg(count(), sum(Col.when(col("late"), lit(1)).otherwise(lit(0)))));
    same("select distinct o_orderstatus from orders order by o_orderstatus",
        orders.select(col("o_orderstatus")).distinct().orderBy(col("o_orderstatus")));
    same("select o_orderstatus from orders union all select o_orderstatus from orders",
        orders.select(col("o_orderstatus")).union(orders.select(col("o_orderstatus")), true));
    String text = orders.select(col("o_orderkey"), col("o_orderstatus")).orderBy(col("o_orderkey")).format(2);
    assertEquals(3, text.lines().count(), text);
    assertTrue(text.startsWith("o_orderkey | o_orderstatus"), text);
  }

  @Test
  void unknownColumnsFailWhereTheyAreNamed() {
    DataFrame li = session.table("lineitem");
    UserException e = assertThrows(UserException.class, () -> li.filter(col("l_shipdat").le(date("1998-09-02"))));
    assertTrue(e.getMessage().contains("l_shipdat") && e.getMessage().contains("l_shipdate"), e.getMessage());
    assertThrows(UserException.class, () -> session.table("nowhere"));
    assertTrue(li.filter(col("l_quantity").lt(lit(5))).explain().contains("GpuFilter"));
    assertEquals("l_orderkey", li.columns().get(0));
  }

  @Test
  void sqlFramesJoinTableFramesWithAnyCondition() {
    DataFrame asia = session.sql("SELECT r_regionkey, r_name AS region FROM region WHERE r_name = 'ASIA'");
    same("SELECT n_name, r_name FROM nation JOIN region ON n_regionkey = r_regionkey AND n_nationkey > r_regionkey"
            + " WHERE r_name = 'ASIA' ORDER BY n_name",
        session.table("nation")
            .join(asia, col("n_regionkey").eq(col("r_regionkey")).and(col("n_nationkey").gt(col("r_regionkey"))),
                JoinRelType.INNER)
            .select(col("n_name"), col("region"))
            .orderBy(col("n_name")));
    same("SELECT n_name FROM nation WHERE n_regionkey NOT IN (SELECT r_regionkey FROM region WHERE r_name = 'ASIA')"
            + " ORDER BY n_name",
        session.table("nation").join(asia, col("n_regionkey").eq(col("r_regionkey")), JoinRelType.ANTI)
            .select(col("n_name")).orderBy(col("n_name")));
    UserException both = assertThrows(UserException.class, () -> session.table("nation")
        .join(session.table("nation"), col("n_nationkey").eq(col("n_nationkey")), JoinRelType.INNER));
    assertTrue(both.getMessage().contains("both sides"), both.getMessage());
    UserException none = assertThrows(UserException.class, () -> session.table("nation")
        .join(asia, col("n_regionkey").eq(col("r_regionkeys")), JoinRelType.INNER));
    assertTrue(none.getMessage().contains("r_regionkeys") && none.getMessage().contains("r_regionkey,"),
        none.getMessage());
    assertThrows(UserException.class, () -> session.sql("SELECT nothing FROM region"));
    assertThrows(UserException.class, () -> session.sql("SELEC 1"));
    UserException ddl = assertThrows(UserException.class, () -> session.sql("DROP TABLE region"));
    assertTrue(ddl.getMessage().contains("update()"), ddl.getMessage());
  }

  @Test
  void schemaCollectAndArrowRoundTrips() {
    DataFrame orders = session.table("orders").select(col("o_orderkey"), col("o_totalprice"), col("o_orderdate"),
        col("o_comment"));
    Schema schema = orders.schema();
    assertEquals(List.of("o_orderkey", "o_totalprice", "o_orderdate", "o_comment"),
        schema.getFields().stream().map(Field::getName).toList());
    assertEquals(new ArrowType.Decimal(15, 2, 128), schema.getFields().get(1).getType());
    assertEquals(new ArrowType.Date(DateUnit.DAY), schema.getFields().get(2).getType());
    try (Table<?> t = orders.filter(col("o_orderkey").lt(lit(100))).collect()) {
      assertTrue(t instanceof dev.gpudf.columnar.HostTable, "a CPU session keeps results on the host");
      assertEquals(List.of("o_orderkey", "o_totalprice", "o_orderdate", "o_comment"), t.names());
      assertTrue(t.rowCount() > 0 && t.rowCount() < 100, "rows " + t.rowCount());
    }
    try (RootAllocator mine = new RootAllocator();
        VectorSchemaRoot rows = orders.orderBy(col("o_orderkey")).limit(7).toArrow(mine)) {
      assertEquals(7, rows.getRowCount());
      DataFrame back = DataFrame.fromArrow(session, rows);
      assertEquals(schema, back.schema());
      same("SELECT o_orderkey, o_totalprice FROM orders WHERE o_orderkey IN "
              + "(SELECT o_orderkey FROM orders ORDER BY o_orderkey LIMIT 7) AND o_totalprice > 100000 ORDER BY o_orderkey",
          back.filter(col("o_totalprice").gt(lit(100000))).select(col("o_orderkey"), col("o_totalprice"))
              .orderBy(col("o_orderkey")));
      rows.close();
      // the frame holds the session's copy, not the caller's vectors
      try (VectorSchemaRoot n = back.groupBy().agg(count().as("n")).toArrow()) {
        assertEquals(7L, n.getVector(0).getObject(0));
      }
    }
    assertFalse(session.catalog().names().stream().anyMatch(n -> n.startsWith("$")), session.catalog().names().toString());
  }

  @Test
  void readsParquetArrowAndCsvFiles(@TempDir Path dir) throws Exception {
    String sql = "SELECT o_orderkey, o_custkey, o_totalprice, o_orderdate, o_orderpriority FROM orders"
        + " WHERE o_orderkey < 200 ORDER BY o_orderkey";
    Path parquet = dir.resolve("orders.parquet");
    Path arrow = dir.resolve("orders.arrow");
    try (VectorSchemaRoot rows = session.query(sql)) {
      java.io.ByteArrayOutputStream ipc = new java.io.ByteArrayOutputStream();
      try (ArrowStreamWriter w = new ArrowStreamWriter(rows, null, ipc)) {
        w.start();
        w.writeBatch();
        w.end();
      }
      try (ArrowReader reader = new ArrowStreamReader(new java.io.ByteArrayInputStream(ipc.toByteArray()), allocator)) {
        DatasetFileWriter.write(allocator, reader, FileFormat.PARQUET, dir.toUri().toString(), new String[0], 1,
            "orders_{i}.parquet");
      }
      try (Stream<Path> files = Files.list(dir)) {
        Files.move(files.filter(f -> f.toString().endsWith(".parquet")).findFirst().orElseThrow(), parquet);
      }
      try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(arrow,
              java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE);
          org.apache.arrow.vector.ipc.ArrowFileWriter w = new org.apache.arrow.vector.ipc.ArrowFileWriter(rows, null, ch)) {
        w.start();
        w.writeBatch();
        w.end();
      }
    }
    Files.writeString(dir.resolve("prio.csv"), "priority,rank\n1-URGENT,1\n2-HIGH,2\n5-LOW,5\n");
    DataFrame fromParquet = session.read().parquet(parquet);
    assertEquals(session.sql(sql).schema(), fromParquet.schema(), "Parquet keeps DECIMAL and DATE");
    same(sql, fromParquet.orderBy(col("o_orderkey")));
    same(sql, session.read().arrow(arrow).orderBy(col("o_orderkey")));
    same("SELECT o_orderkey, \"rank\" FROM orders JOIN (VALUES ('1-URGENT', 1), ('2-HIGH', 2), ('5-LOW', 5))"
            + " AS p(priority, \"rank\") ON o_orderpriority = priority WHERE o_orderkey < 200 ORDER BY o_orderkey",
        fromParquet.join(session.read().csv(dir.resolve("prio.csv")), col("o_orderpriority").eq(col("priority")),
                JoinRelType.INNER)
            .select(col("o_orderkey"), col("rank")).orderBy(col("o_orderkey")));
    Files.writeString(dir.resolve("bad.parquet"), "not parquet");
    UserException bad = assertThrows(UserException.class, () -> session.read().parquet(dir.resolve("bad.parquet")));
    assertTrue(bad.getMessage().contains("bad.parquet"), bad.getMessage());
    assertThrows(UserException.class, () -> session.read().parquet(dir.resolve("absent.parquet")));
  }

  @Test
  void jdbcUrlConnectsToThisSession() throws Exception {
    try (RootAllocator a = new RootAllocator(); GpuSession own = GpuSession.cpu(a)) {
      try (VectorSchemaRoot nation = session.query("SELECT * FROM nation")) {
        own.createTable("nation", nation);
      }
      String url = own.jdbcUrl();
      assertEquals(url, own.jdbcUrl());
      try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
          java.sql.Statement st = c.createStatement()) {
        try (java.sql.ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM nation")) {
          assertTrue(rs.next());
          assertEquals(25, rs.getLong(1));
        }
        st.executeUpdate("CREATE TABLE made_over_jdbc AS SELECT n_name FROM nation WHERE n_regionkey = 1");
      }
      same("SELECT n_name FROM nation WHERE n_regionkey = 1 ORDER BY n_name",
          own.table("made_over_jdbc").orderBy(col("n_name")), own);
      own.close();
      java.sql.SQLException gone = assertThrows(java.sql.SQLException.class, () -> java.sql.DriverManager.getConnection(url));
      assertTrue(gone.getMessage().contains("no open session"), gone.getMessage());
    }
  }

  /** The same frames on a GPU session: results stay on the device until asked for, and agree with the CPU's. */
  @RequiresGpu
  @Test
  void gpuSessionCollectsToTheDevice() {
    try (Gpu gpu = Gpu.open(0, 2L << 30, 256L << 20); GpuSession g = GpuSession.gpu(gpu, allocator)) {
      for (String t : List.of("lineitem", "orders", "customer")) {
        try (VectorSchemaRoot rows = session.query("SELECT * FROM " + t)) {
          g.createTable(t, rows);
        }
      }
      DataFrame q = g.table("customer").join(g.table("orders"), col("c_custkey").eq(col("o_custkey")), JoinRelType.INNER)
          .filter(col("o_orderdate").lt(date("1995-03-15")))
          .groupBy("c_mktsegment").agg(sum(col("o_totalprice")).as("total"), count().as("n"))
          .orderBy(col("c_mktsegment"));
      try (Table<?> t = q.collect()) {
        assertTrue(t instanceof dev.gpudf.columnar.DeviceTable, t.getClass().getName());
        assertEquals(5, t.rowCount());
      }
      try (VectorSchemaRoot want = session.query("SELECT c_mktsegment, SUM(o_totalprice), COUNT(*) FROM customer, orders"
              + " WHERE c_custkey = o_custkey AND o_orderdate < DATE '1995-03-15' GROUP BY c_mktsegment ORDER BY 1");
          VectorSchemaRoot got = q.toArrow(allocator)) {
        assertSameRows(want, got);
      }
    }
  }
}
