package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.HostTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gpudf's columnar shuffle ({@link GpudfShuffleExchangeExec}) in Spark {@code local[2]} on the CPU
 * backend: its partition of every row is Spark's own (so a join whose other side Spark shuffles
 * meets the same keys), answers are Spark's alone, and what it will not take stays Spark's.
 */
class ColumnarShuffleTest {
  @TempDir
  static Path dir;
  private static SparkSession spark;
  /** Every key type the shuffle hashes, with NULLs, edge values, -0.0, NaN and non-ASCII strings. */
  private static final String KEYS = "SELECT id, CAST(id % 13 - 6 AS INT) AS i, id * 1000003 - 500000000 AS l,"
      + " CASE WHEN id % 9 = 0 THEN NULL WHEN id % 7 = 0 THEN concat('ü', CAST(id AS STRING), 'ß')"
      + "   WHEN id % 11 = 0 THEN '' ELSE CAST(id % 50 AS STRING) END AS s,"
      + " date_add(DATE '1969-12-25', CAST(id % 40 AS INT)) AS d,"
      + " CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id * 0.37 - 20 AS DECIMAL(12, 2)) END AS dec,"
      + " CASE WHEN id % 17 = 0 THEN CAST('NaN' AS DOUBLE) WHEN id % 19 = 0 THEN -0.0D WHEN id % 23 = 0 THEN 0.0D"
      + "   ELSE id * 0.5 END AS dbl,"
      + " CAST(id % 3 - 1 AS SMALLINT) AS sh, CAST(id % 5 AS TINYINT) AS ti, id % 2 = 0 AS b"
      + " FROM range(0, 3000)";

  /** Spark's own hash exchange in a plan's text (gpudf's prints as "GpudfShuffleExchange hashpartitioning"). */
  private static final java.util.regex.Pattern SPARKS_EXCHANGE = java.util.regex.Pattern.compile("(^|[ -])Exchange hashpartitioning");

  @BeforeAll
  static void start() {
    spark = LocalSpark.start("gpudf-columnar-shuffle");
    spark.sql(KEYS).write().parquet(dir.resolve("k").toString());
    spark.read().parquet(dir.resolve("k").toString()).createOrReplaceTempView("k");
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  /** For each key type alone and all of them together: Spark's {@code pmod(hash(...), n)} for every row, for n = 1, 7 and 200. */
  @Test
  void partitionsAreSparks() {
    Dataset<Row> keys = spark.sql(KEYS);
    StructType schema = keys.schema();
    List<InternalRow> rows = new ArrayList<>();
    keys.queryExecution().toRdd().toJavaRDD().map(InternalRow::copy).collect().forEach(rows::add);
    List<String> columns = List.of("i", "l", "s", "d", "dec", "dbl", "sh", "ti", "b");
    List<List<String>> sets = new ArrayList<>();
    columns.forEach(c -> sets.add(List.of(c)));
    sets.add(columns);
    sets.add(List.of("s", "i", "dec"));
    try (RootAllocator a = new RootAllocator();
        HostTable t = SparkArrow.rows(rows.iterator(), schema, a)) {
      for (List<String> set : sets) {
        List<FieldVector> vectors = new ArrayList<>();
        List<DataType> types = new ArrayList<>();
        for (String c : set) {
          int at = schema.fieldIndex(c);
          vectors.add(t.column(at).vector());
          types.add(schema.fields()[at].dataType());
          SparkPartitionIds.check(schema.fields()[at].dataType());
        }
        for (int n : new int[] {1, 7, 200}) {
          String expr = "pmod(hash(" + String.join(", ", set) + "), " + n + ")";
          List<Row> want = keys.selectExpr(expr).collectAsList();
          int[] got = SparkPartitionIds.of(vectors, types, rows.size(), n);
          assertEquals(want.size(), got.length);
          for (int r = 0; r < got.length; r++) {
            assertEquals(want.get(r).getInt(0), got[r], expr + " of row " + r);
          }
        }
      }
    }
  }

  /** A key Spark hashes otherwise than this does (a timestamp, a decimal of 19 digits and more) is refused, named. */
  @Test
  void keysItCannotHashAreRefused() {
    for (String type : List.of("TIMESTAMP", "DECIMAL(20, 2)", "BINARY", "ARRAY<INT>")) {
      DataType t = StructType.fromDDL("x " + type).apply("x").dataType();
      ExprTranslator.Refused e = assertThrows(ExprTranslator.Refused.class, () -> SparkPartitionIds.check(t));
      assertTrue(e.getMessage().contains(t.simpleString()), e.getMessage());
    }
  }

  /**
   * Joins on each key type gpudf joins on, where gpudf shuffles one side and Spark the other (its
   * filter is one gpudf does not take), then both: Spark's answers, and the plan shows which
   * exchange is which. (gpudf joins on no floating-point key, and takes no small integer or boolean
   * column from Parquet: those keys' partitions are checked by {@link #partitionsAreSparks}.)
   */
  @Test
  void joinsMeetSparksShuffle() {
    for (String key : List.of("i", "l", "s", "d", "dec")) {
      // sha2 keeps the right side's filter, hence its shuffle, on Spark
      String mixed = "SELECT x.id, y.id FROM k x JOIN k y ON x." + key + " = y." + key
          + " WHERE x.id % 10 = 1 AND y.id < 400 AND sha2(CAST(y.id AS STRING), 256) <> ''";
      String plan = plan(mixed);
      assertTrue(plan.contains("GpudfShuffleExchange"), plan);
      assertTrue(SPARKS_EXCHANGE.matcher(plan).find(), "one side shuffled by Spark: " + plan);
      assertEquals(LocalSpark.rows(spark, mixed, false), LocalSpark.rows(spark, mixed, true), mixed);
      String both = "SELECT x." + key + ", COUNT(*), MIN(y.id) FROM k x JOIN k y ON x." + key + " = y." + key
          + " WHERE x.id % 10 = 1 GROUP BY x." + key;
      String bothPlan = plan(both);
      assertTrue(bothPlan.contains("GpudfShuffleExchange") && !SPARKS_EXCHANGE.matcher(bothPlan).find(),
          "both sides shuffled by gpudf: " + bothPlan);
      assertEquals(LocalSpark.rows(spark, both, false), LocalSpark.rows(spark, both, true), both);
    }
  }

  /** With the shuffle turned off by its setting, Spark's exchanges stay, and the answers are the same. */
  @Test
  void theSettingTurnsItOff() {
    String sql = "SELECT s, COUNT(*), SUM(l) FROM k GROUP BY s";
    assertTrue(plan(sql).contains("GpudfShuffleExchange"), plan(sql));
    spark.conf().set(GpudfOverrides.COLUMNAR_SHUFFLE, "false");
    try {
      String plan = plan(sql);
      assertFalse(plan.contains("GpudfShuffleExchange"), plan);
      assertEquals(LocalSpark.rows(spark, sql, false), LocalSpark.rows(spark, sql, true));
    } finally {
      spark.conf().unset(GpudfOverrides.COLUMNAR_SHUFFLE);
    }
  }

  /**
   * A global aggregate's single partition and shuffles to many partitions, some empty, through both
   * of Spark's shuffle writers (a file a partition up to 200 partitions, records sorted by partition
   * above): Spark's answers.
   */
  @Test
  void singleAndSparsePartitions() {
    try {
      for (String partitions : List.of("50", "300")) {
        spark.conf().set("spark.sql.shuffle.partitions", partitions);
        for (String sql : List.of("SELECT COUNT(*), SUM(l), MIN(s) FROM k WHERE id % 4 = 1",
            "SELECT b, COUNT(*) FROM k GROUP BY b", "SELECT i, s, COUNT(*) FROM k WHERE id < 0 GROUP BY i, s",
            "SELECT s, d, COUNT(*), SUM(dec) FROM k GROUP BY s, d")) {
          assertEquals(LocalSpark.rows(spark, sql, false), LocalSpark.rows(spark, sql, true), partitions + ": " + sql);
          assertTrue(plan(sql).contains("GpudfShuffleExchange"), plan(sql));
        }
      }
    } finally {
      spark.conf().set("spark.sql.shuffle.partitions", "2");
    }
  }

  /**
   * A view read by a query and by its subquery (TPC-H q15's shape) shuffles once: the second
   * exchange takes the first's shuffle; two exchanges that differ only in a filter's constant each
   * shuffle their own rows (a wrong share would answer a's totals for b). Nothing is kept once the
   * queries end.
   */
  @Test
  void anExchangeComputedTwiceShufflesOnce() throws Exception {
    String twice = "WITH v AS (SELECT s, SUM(l) AS total FROM k GROUP BY s)"
        + " SELECT s, total FROM v WHERE total = (SELECT MAX(total) FROM v)";
    String alike = "WITH a AS (SELECT s, SUM(l) AS t FROM k WHERE id % 2 = 0 GROUP BY s),"
        + " b AS (SELECT s, SUM(l) AS t FROM k WHERE id % 2 = 1 GROUP BY s)"
        + " SELECT a.s, a.t, b.t FROM a JOIN b ON a.s = b.s";
    List<String> want = LocalSpark.rows(spark, twice, false);
    long before = ExchangeReuse.shared();
    assertEquals(want, LocalSpark.rows(spark, twice, true), twice);
    assertEquals(before + 1, ExchangeReuse.shared(), "the subquery's exchange took the query's shuffle");
    List<String> wantAlike = LocalSpark.rows(spark, alike, false);
    assertEquals(wantAlike, LocalSpark.rows(spark, alike, true), alike);
    assertEquals(before + 1, ExchangeReuse.shared(), "exchanges of other rows share nothing");
    spark.sparkContext().listenerBus().waitUntilEmpty();
    assertEquals(0, ExchangeReuse.queries(), "no query's shuffles kept after it ended");
  }

  private static String plan(String sql) {
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    return spark.sql(sql).queryExecution().executedPlan().toString();
  }
}
