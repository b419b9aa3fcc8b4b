package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** SQL end to end on a small lineitem-like table, against answers computed in plain Java. */
class GpuSessionTest {
  private static final int ROWS = 500;
  private RootAllocator allocator;
  private final List<Row> rows = new ArrayList<>();

  record Row(long orderkey, BigDecimal price, BigDecimal discount, String flag, LocalDate shipdate, String comment) {
    BigDecimal charge() {
      return price.multiply(BigDecimal.ONE.subtract(discount));
    }
  }

  @BeforeEach
  void open() {
    allocator = new RootAllocator();
    SplittableRandom r = new SplittableRandom(3);
    String[] words = {"special", "requests", "carefully", "final", "pending", "ironic"};
    for (int i = 0; i < ROWS; i++) {
      rows.add(new Row(i * 7L % 101, BigDecimal.valueOf(r.nextLong(100, 1_000_000), 2), BigDecimal.valueOf(r.nextInt(11), 2),
          r.nextBoolean() ? "R" : "N", LocalDate.of(1992, 1, 1).plusDays(r.nextInt(2500)),
          words[r.nextInt(words.length)] + " " + words[r.nextInt(words.length)]));
    }
  }

  @AfterEach
  void close() {
    allocator.close();
  }

  private VectorSchemaRoot lineitem(BufferAllocator a) {
    BigIntVector key = new BigIntVector("l_orderkey", a);
    DecimalVector price = new DecimalVector("l_extendedprice", a, 15, 2);
    DecimalVector disc = new DecimalVector("l_discount", a, 15, 2);
    VarCharVector flag = new VarCharVector("l_returnflag", a);
    DateDayVector ship = new DateDayVector("l_shipdate", a);
    VarCharVector comment = new VarCharVector("l_comment", a);
    List<FieldVector> all = List.of(key, price, disc, flag, ship, comment);
    all.forEach(v -> {
      v.setInitialCapacity(ROWS);
      v.allocateNew();
    });
    for (int i = 0; i < ROWS; i++) {
      Row row = rows.get(i);
      key.setSafe(i, row.orderkey);
      price.setSafe(i, row.price);
      disc.setSafe(i, row.discount);
      flag.setSafe(i, row.flag.getBytes(StandardCharsets.UTF_8));
      ship.setSafe(i, (int) row.shipdate.toEpochDay());
      comment.setSafe(i, row.comment.getBytes(StandardCharsets.UTF_8));
    }
    all.forEach(v -> v.setValueCount(ROWS));
    VectorSchemaRoot root = new VectorSchemaRoot(all);
    root.setRowCount(ROWS);
    return root;
  }

  private void check(GpuSession s) {
    try (VectorSchemaRoot data = lineitem(allocator)) {
      s.catalog().register("lineitem", data);
    }
    LocalDate cutoff = LocalDate.of(1998, 12, 1).minusDays(90);
    // filter, projection with decimal arithmetic, ORDER BY two keys, LIMIT
    try (VectorSchemaRoot got = s.query("SELECT l_orderkey, l_extendedprice * (1 - l_discount) AS charge FROM lineitem "
        + "WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY AND l_returnflag = 'R' "
        + "ORDER BY charge DESC, l_orderkey LIMIT 5")) {
      List<Row> want = rows.stream().filter(r -> !r.shipdate.isAfter(cutoff) && r.flag.equals("R"))
          .sorted(Comparator.comparing(Row::charge).reversed().thenComparing(Row::orderkey)).limit(5).toList();
      assertEquals(List.of("l_orderkey", "charge"), got.getSchema().getFields().stream().map(f -> f.getName()).toList());
      assertEquals(want.size(), got.getRowCount());
      for (int i = 0; i < want.size(); i++) {
        assertEquals(want.get(i).orderkey, got.getVector(0).getObject(i));
        assertEquals(0, want.get(i).charge().compareTo((BigDecimal) got.getVector(1).getObject(i)), "row " + i);
      }
    }
    // global aggregates
    try (VectorSchemaRoot got = s.query("SELECT COUNT(*), SUM(l_extendedprice), AVG(l_discount), MIN(l_shipdate), "
        + "MAX(l_orderkey) FROM lineitem WHERE l_comment LIKE '%special%'")) {
      List<Row> want = rows.stream().filter(r -> r.comment.contains("special")).toList();
      assertEquals((long) want.size(), got.getVector(0).getObject(0));
      assertEquals(0, want.stream().map(Row::price).reduce(BigDecimal.ZERO, BigDecimal::add)
          .compareTo((BigDecimal) got.getVector(1).getObject(0)));
      double avg = want.stream().mapToDouble(r -> r.discount.doubleValue()).average().orElseThrow();
      assertEquals(avg, (Double) got.getVector(2).getObject(0), 1e-12);
      assertEquals((int) want.stream().map(Row::shipdate).min(Comparator.naturalOrder()).orElseThrow().toEpochDay(),
          got.getVector(3).getObject(0));
      assertEquals(want.stream().mapToLong(Row::orderkey).max().orElseThrow(), got.getVector(4).getObject(0));
    }
    // OFFSET without ORDER BY slices; string functions in the select list
    try (VectorSchemaRoot got = s.query("SELECT SUBSTRING(l_comment, 1, 3), CHAR_LENGTH(l_comment) FROM lineitem OFFSET 10 ROWS "
        + "FETCH NEXT 2 ROWS ONLY")) {
      assertEquals(2, got.getRowCount());
      assertEquals(rows.get(10).comment.substring(0, 3), got.getVector(0).getObject(0).toString());
      assertEquals(rows.get(11).comment.length(), got.getVector(1).getObject(1));
    }
    assertTrue(s.explain("SELECT l_orderkey FROM lineitem WHERE l_discount > 0.05").contains("GpuFilter"));
    // the same statement again is served from the plan cache
    long planned = s.plansMade();
    for (int i = 0; i < 3; i++) {
      s.query("SELECT COUNT(*) FROM lineitem WHERE l_discount > 0.05").close();
    }
    assertEquals(planned + 1, s.plansMade());
    // parameters bind to the one cached plan
    String byDiscount = "SELECT COUNT(*) FROM lineitem WHERE l_discount > ? AND l_shipdate >= ?";
    planned = s.plansMade();
    assertEquals(2, s.parameterTypes(byDiscount).size());
    for (String d : List.of("0.01", "0.05", "0.09")) {
      try (VectorSchemaRoot got = s.query(byDiscount, List.of(new BigDecimal(d), (int) LocalDate.of(1995, 1, 1).toEpochDay()))) {
        long want = rows.stream().filter(r -> r.discount.compareTo(new BigDecimal(d)) > 0
            && !r.shipdate.isBefore(LocalDate.of(1995, 1, 1))).count();
        assertEquals(want, got.getVector(0).getObject(0), "discount > " + d);
      }
    }
    assertEquals(planned + 1, s.plansMade());
    assertThrows(UserException.class, () -> s.query(byDiscount, List.of(BigDecimal.ONE)));
    assertThrows(UserException.class, () -> s.query(byDiscount, List.of("x", 0)));
    // GROUP BY (on the CPU group-by for now) with ORDER BY over its result
    try (VectorSchemaRoot got = s.query("SELECT l_returnflag, COUNT(*) AS n, SUM(l_extendedprice) AS total, "
        + "AVG(l_discount) AS disc FROM lineitem WHERE l_orderkey < 50 GROUP BY l_returnflag ORDER BY l_returnflag")) {
      List<String> flags = rows.stream().filter(r -> r.orderkey < 50).map(Row::flag).distinct().sorted().toList();
      assertEquals(flags.size(), got.getRowCount());
      for (int i = 0; i < flags.size(); i++) {
        String f = flags.get(i);
        List<Row> members = rows.stream().filter(r -> r.orderkey < 50 && r.flag.equals(f)).toList();
        assertEquals(f, got.getVector(0).getObject(i).toString());
        assertEquals((long) members.size(), got.getVector(1).getObject(i));
        assertEquals(0, members.stream().map(Row::price).reduce(BigDecimal.ZERO, BigDecimal::add)
            .compareTo((BigDecimal) got.getVector(2).getObject(i)));
        assertEquals(members.stream().mapToDouble(r -> r.discount.doubleValue()).average().orElseThrow(),
            (Double) got.getVector(3).getObject(i), 1e-12);
      }
    }
    assertTrue(s.explain("SELECT l_returnflag FROM lineitem EXCEPT ALL SELECT l_returnflag FROM lineitem WHERE l_orderkey < 3").contains("backend=[cpu]"));
    assertFalse(s.explain("SELECT l_returnflag FROM lineitem EXCEPT SELECT l_returnflag FROM lineitem WHERE l_orderkey < 3").contains("backend="));
    assertFalse(s.explain("SELECT l_returnflag, COUNT(*) FROM lineitem GROUP BY l_returnflag").contains("backend="));
    try (VectorSchemaRoot got = s.query("SELECT COUNT(DISTINCT l_returnflag), COUNT(DISTINCT l_orderkey) FROM lineitem")) {
      assertEquals(rows.stream().map(Row::flag).distinct().count(), got.getVector(0).getObject(0));
      assertEquals(rows.stream().map(Row::orderkey).distinct().count(), got.getVector(1).getObject(0));
    }
    try (VectorSchemaRoot got = s.query("SELECT MAX(rn) FROM (SELECT ROW_NUMBER() OVER (ORDER BY l_orderkey) rn FROM lineitem)")) {
      assertEquals((long) rows.size(), got.getVector(0).getObject(0));
    }
    NotSupportedException window = assertThrows(NotSupportedException.class, () -> s.query(
        "SELECT COUNT(DISTINCT l_returnflag) OVER (ORDER BY l_orderkey) FROM lineitem"));
    assertTrue(window.getMessage().contains("DISTINCT in a window function"), window.getMessage());
    // a join written in WHERE becomes an equi-join; then a filter, a group and an order
    try (VectorSchemaRoot got = s.query("SELECT a.l_returnflag, COUNT(*) AS pairs FROM lineitem a, lineitem b "
        + "WHERE a.l_orderkey = b.l_orderkey AND a.l_returnflag <> b.l_returnflag AND a.l_orderkey < 20 "
        + "GROUP BY a.l_returnflag ORDER BY a.l_returnflag")) {
      for (int i = 0; i < got.getRowCount(); i++) {
        String f = got.getVector(0).getObject(i).toString();
        long want = rows.stream().filter(x -> x.orderkey < 20 && x.flag.equals(f))
            .mapToLong(x -> rows.stream().filter(y -> y.orderkey == x.orderkey && !y.flag.equals(x.flag)).count()).sum();
        assertEquals(want, got.getVector(1).getObject(i), f);
      }
      assertTrue(got.getRowCount() > 0);
    }
    assertTrue(s.explain("SELECT * FROM lineitem a JOIN lineitem b ON a.l_orderkey = b.l_orderkey").contains("GpuJoin"));
    try (VectorSchemaRoot all = s.query("SELECT l_returnflag FROM lineitem UNION ALL SELECT l_returnflag FROM lineitem");
        VectorSchemaRoot distinct = s.query("SELECT l_returnflag AS f FROM lineitem UNION SELECT l_returnflag FROM lineitem "
            + "ORDER BY f")) {
      assertEquals(2 * ROWS, all.getRowCount());
      List<String> flags = rows.stream().map(Row::flag).distinct().sorted().toList();
      assertEquals(flags.size(), distinct.getRowCount());
      for (int i = 0; i < flags.size(); i++) {
        assertEquals(flags.get(i), distinct.getVector(0).getObject(i).toString());
      }
    }
    try (VectorSchemaRoot none = s.query("SELECT l_orderkey FROM lineitem EXCEPT SELECT l_orderkey FROM lineitem");
        VectorSchemaRoot flags = s.query("SELECT l_returnflag FROM lineitem INTERSECT SELECT 'R' FROM lineitem")) {
      assertEquals(0, none.getRowCount());
      assertEquals(rows.stream().anyMatch(r -> r.flag.equals("R")) ? 1 : 0, flags.getRowCount());
    }
    // literal rows: SELECT without FROM, VALUES widened to one type per column, NULLs, joined with a table
    try (VectorSchemaRoot got = s.query("SELECT 1 + 1 AS two, 'Zürich' AS city, DATE '2024-02-29' AS d")) {
      assertEquals(1, got.getRowCount());
      assertEquals(2, ((Number) got.getVector(0).getObject(0)).intValue());
      assertEquals("Zürich", got.getVector(1).getObject(0).toString());
      assertEquals((int) LocalDate.of(2024, 2, 29).toEpochDay(), got.getVector(2).getObject(0));
    }
    try (VectorSchemaRoot got = s.query("SELECT x, y FROM (VALUES (1, 'a'), (2.25, NULL), (NULL, 'ccc')) AS t(x, y) ORDER BY x")) {
      assertEquals(3, got.getRowCount());
      assertEquals(new BigDecimal("1.00"), got.getVector(0).getObject(0));
      assertEquals(new BigDecimal("2.25"), got.getVector(0).getObject(1));
      assertNull(got.getVector(0).getObject(2));
      assertNull(got.getVector(1).getObject(1));
      assertEquals("ccc", got.getVector(1).getObject(2).toString());
    }
    try (VectorSchemaRoot got = s.query("SELECT COUNT(*) FROM lineitem JOIN (VALUES ('R'), ('A')) AS f(flag) ON l_returnflag = flag")) {
      assertEquals(rows.stream().filter(r -> r.flag.equals("R") || r.flag.equals("A")).count(), got.getVector(0).getObject(0));
    }
    assertThrows(UserException.class, () -> s.query("SELEKT 1"));
    assertThrows(UserException.class, () -> s.query("SELECT * FROM nowhere"));
  }

  @Test
  void parseErrorsSayWhereInOneLineAndHowToUseAReservedWord() {
    try (GpuSession s = GpuSession.cpu(allocator)) {
      assertEquals("Encountered \"year ,\" at line 1, column 8. 'year' is a reserved word: quote it (\"year\") to use it"
          + " as a name.", assertThrows(UserException.class, () -> s.query("SELECT year, 1 FROM (VALUES (1)) t(x)")).getMessage());
      assertEquals("Incorrect syntax near the keyword 'WHERE' at line 2, column 1.",
          assertThrows(UserException.class, () -> s.query("SELECT 1\nWHERE")).getMessage());
      assertEquals("Encountered \"month\" at line 1, column 24. 'month' is a reserved word: quote it (\"month\") to use it"
          + " as a name.", assertThrows(UserException.class, () -> s.update("CREATE TABLE t (x INT, month INT)")).getMessage());
    }
  }

  @Test
  void cpuBackend() {
    try (GpuSession s = GpuSession.cpu(allocator)) {
      check(s);
    }
  }

  @RequiresGpu
  @Test
  void gpuBackend() {
    try (Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20); GpuSession s = GpuSession.gpu(gpu, allocator)) {
      check(s);
    }
  }

}
