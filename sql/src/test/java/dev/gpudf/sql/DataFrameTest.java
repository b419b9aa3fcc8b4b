package dev.gpudf.sql;

import static dev.gpudf.sql.Agg.avg;
import static dev.gpudf.sql.Agg.count;
import static dev.gpudf.sql.Agg.sum;
import static dev.gpudf.sql.Col.col;
import static dev.gpudf.sql.Col.date;
import static dev.gpudf.sql.Col.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.rel.core.JoinRelType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** TPC-H queries written with the DataFrame API give what their SQL text gives, in one session. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DataFrameTest {
  private RootAllocator allocator;
  private GpudfSession session;

  @BeforeAll
  void load() {
    allocator = new RootAllocator();
    session = GpudfSession.cpu(allocator);
    for (TpchTable<?> t : List.of(TpchTable.LINE_ITEM, TpchTable.ORDERS, TpchTable.CUSTOMER,
        TpchTable.SUPPLIER, TpchTable.NATION, TpchTable.REGION)) {
      try (VectorSchemaRoot r = TpchData.arrow(allocator, t, 0.01)) {
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
    try (VectorSchemaRoot want = session.query(sql); VectorSchemaRoot got = df.toArrow()) {
      assertTrue(want.getRowCount() > 0, "the query selects nothing: " + sql);
      assertSameRows(want, got);
    }
  }

  @Test
  void q1() {
    Col price = col("l_extendedprice");
    Col disc = col("l_discount");
    same(TpchTest.QUERIES.get("q1"), session.table("lineitem")
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
    same(TpchTest.QUERIES.get("q3"), customer
        .join(session.table("orders"), JoinRelType.INNER, "c_custkey", "o_custkey")
        .join(session.table("lineitem"), JoinRelType.INNER, "o_orderkey", "l_orderkey")
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
    same(TpchTest.QUERIES.get("q5"), session.table("customer")
        .join(session.table("orders"), JoinRelType.INNER, "c_custkey", "o_custkey")
        .filter(col("o_orderdate").ge(date("1994-01-01")).and(col("o_orderdate").lt(date("1995-01-01"))))
        .join(session.table("lineitem"), JoinRelType.INNER, "o_orderkey", "l_orderkey")
        .join(session.table("supplier"), JoinRelType.INNER, "l_suppkey", "s_suppkey", "c_nationkey", "s_nationkey")
        .join(session.table("nation"), JoinRelType.INNER, "s_nationkey", "n_nationkey")
        .join(asia, JoinRelType.INNER, "n_regionkey", "r_regionkey")
        .groupBy("n_name")
        .agg(sum(revenue).as("revenue"))
        .orderBy(col("revenue").desc()));
  }

  @Test
  void q10() {
    Col revenue = col("l_extendedprice").times(lit(1).minus(col("l_discount")));
    same(TpchTest.QUERIES.get("q10"), session.table("customer")
        .join(session.table("orders"), JoinRelType.INNER, "c_custkey", "o_custkey")
        .filter(col("o_orderdate").ge(date("1993-10-01")).and(col("o_orderdate").lt(date("1994-01-01"))))
        .join(session.table("lineitem").filter(col("l_returnflag").eq(lit("R"))), JoinRelType.INNER,
            "o_orderkey", "l_orderkey")
        .join(session.table("nation"), JoinRelType.INNER, "c_nationkey", "n_nationkey")
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
        .join(session.table("region").filter(col("r_name").eq(lit("ASIA"))), JoinRelType.INNER, "n_regionkey", "r_regionkey")
        .select(col("n_name")));
    same("SELECT n_name FROM nation, region WHERE n_regionkey = r_regionkey AND r_name = 'ASIA' ORDER BY n_name",
        session.table("asia_nations").orderBy(col("n_name")));
  }

  @Test
  void q6() {
    same(TpchTest.QUERIES.get("q6"), session.table("lineitem")
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
}
