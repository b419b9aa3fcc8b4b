package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark's Parquet scans on gpudf ({@link GpudfParquetScanExec}), CPU backend (the device decoder's
 * CPU twin): every row read once and as Spark reads it when Spark's splits cut files between row
 * groups; every column type the decoder gives, NULLs, non-ASCII and empty strings, dictionary and
 * PLAIN pages; files the decoder does not take (another codec) read by Spark's reader beside the
 * ones it does, in one table; types it does not give leave the scan to Spark.
 */
class ParquetScanTest {
  @TempDir
  static Path dir;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSpark.builder("gpudf-scan-test", "cpu")
        // splits of at most 64 KB, files opened at no cost: each file below is cut into several splits
        .config("spark.sql.files.maxPartitionBytes", "65536")
        .config("spark.sql.files.openCostInBytes", "0")
        .getOrCreate();
    // 200,000 rows in 2 files of row groups of about 32 KB (parquet.block.size): many row groups a file, and
    // splits whose edges fall inside row groups
    spark.range(0, 200_000, 1, 2).selectExpr("id", "CAST(id % 1000 AS INT) AS k",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id * 0.5 AS DOUBLE) END AS v",
        "CASE WHEN id % 13 = 0 THEN NULL WHEN id % 17 = 0 THEN '' ELSE concat(IF(id % 2 = 0, 'né', 'n'),"
            + " CAST(id % 5000 AS STRING)) END AS name",
        "CAST(id AS STRING) AS unique_name",
        "date_add(DATE '1995-01-01', CAST(id % 4000 AS INT)) AS d",
        "CAST((id % 100000) * 0.25 - 300 AS DECIMAL(15, 2)) AS price",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 100 AS DECIMAL(7, 2)) END AS small")
        .write().option("parquet.block.size", "32768").option("parquet.page.size", "8192")
        .parquet(dir.resolve("t").toString());
    spark.read().parquet(dir.resolve("t").toString()).createOrReplaceTempView("t");
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static List<String> rows(String sql, boolean gpudf) {
    return LocalSpark.rows(spark, sql, gpudf);
  }

  /** {@code got} equals {@code want}, or a failure naming the row counts and the first row that differs (not all of them). */
  private static void same(List<String> want, List<String> got) {
    for (int i = 0; i < Math.min(want.size(), got.size()); i++) {
      assertEquals(want.get(i), got.get(i), "row " + i + " of " + want.size() + " (" + got.size() + " read)");
    }
    assertEquals(want.size(), got.size(), "rows");
  }

  private static String plan(String sql) {
    spark.conf().set(GpudfOverrides.ENABLED, "true");
    return spark.sql(sql).queryExecution().executedPlan().toString();
  }

  @Test
  void splitsThatCutFilesReadEachRowOnce() throws Exception {
    List<Path> parquet;
    try (var list = Files.list(dir.resolve("t"))) {
      parquet = list.filter(p -> p.toString().endsWith(".parquet")).toList();
    }
    long files = parquet.size();
    for (Path f : parquet) {
      dev.gpudf.formats.ParquetRowGroups g = dev.gpudf.formats.ParquetRowGroups.open(f, List.of("id"),
          List.of(dev.gpudf.columnar.DataType.INT64));
      assertTrue(g != null && g.count() >= 8, f + ": " + (g == null ? "not taken" : g.count() + " row groups"));
    }
    String sql = "SELECT * FROM t";
    int partitions = spark.sql(sql).rdd().getNumPartitions();
    assertTrue(partitions >= 4 * files, partitions + " splits of " + files + " files: they must cut the files");
    long before = GpudfBackend.get().splitsLeftToSpark();
    List<String> want = rows(sql, false);
    List<String> got = rows(sql, true);
    assertEquals(200_000, want.size());
    same(want, got);
    assertTrue(plan(sql).contains("GpudfParquetScan"), plan(sql));
    assertEquals(before, GpudfBackend.get().splitsLeftToSpark(), "splits left to Spark's reader");
  }

  @Test
  void columnsReadByTheScanFeedGpudfOperators() {
    String sql = "SELECT k, COUNT(*), SUM(price), MIN(name), MAX(d), SUM(small), COUNT(v) FROM t"
        + " WHERE name LIKE 'né%' OR small > 50 GROUP BY k";
    same(rows(sql, false), rows(sql, true));
    String plan = plan(sql);
    assertTrue(plan.contains("GpudfParquetScan") && plan.contains("GpudfFilter"), plan);
  }

  @Test
  void filesTheDecoderDoesNotTakeAreReadBySpark() {
    // one table, files of two codecs: gzip's go to Spark's reader, snappy's to gpudf's
    Path mixed = dir.resolve("mixed");
    spark.sql("SELECT id, CAST(id % 9 AS INT) AS k, concat('x', CAST(id AS STRING)) AS s FROM range(0, 30000, 1, 1)")
        .write().option("compression", "gzip").parquet(mixed.toString());
    spark.sql("SELECT id, CAST(id % 9 AS INT) AS k, concat('x', CAST(id AS STRING)) AS s FROM range(30000, 60000, 1, 1)")
        .write().mode("append").option("compression", "snappy").parquet(mixed.toString());
    spark.read().parquet(mixed.toString()).createOrReplaceTempView("mixed");
    String sql = "SELECT k, COUNT(*), SUM(id), MAX(s) FROM mixed GROUP BY k";
    long before = GpudfBackend.get().splitsLeftToSpark();
    same(rows(sql, false), rows(sql, true));
    assertTrue(GpudfBackend.get().splitsLeftToSpark() > before, "the gzip file's splits went to Spark's reader");
    assertTrue(plan(sql).contains("GpudfParquetScan"), plan(sql));
  }

  /**
   * Files Parquet's Java writer wrote with other settings, each cut into several splits: version-2
   * data pages and delta encodings (every split goes to Spark's reader, by the footer's encodings or
   * by its first pages; none fails part way through), and no dictionaries (PLAIN strings, which
   * gpudf decodes).
   */
  @Test
  void filesOfOtherWriterSettings() {
    String select = "SELECT id, CAST(id % 7 AS INT) AS k, IF(id % 5 = 0, NULL, concat('s', CAST(id % 300 AS STRING))) AS s,"
        + " CAST(id % 1000 AS DECIMAL(15, 2)) AS m FROM range(0, 120000, 1, 1)";
    String[][] settings = {{"v2", "parquet.writer.version", "PARQUET_2_0"}, {"plain", "parquet.enable.dictionary", "false"}};
    for (String[] w : settings) {
      Path at = dir.resolve(w[0]);
      spark.sql(select).write().option(w[1], w[2]).option("parquet.block.size", "65536").parquet(at.toString());
      spark.read().parquet(at.toString()).createOrReplaceTempView(w[0]);
      String sql = "SELECT k, COUNT(*), SUM(id), MIN(s), MAX(s), SUM(m) FROM " + w[0] + " WHERE id % 3 <> 1 GROUP BY k";
      assertTrue(spark.sql("SELECT * FROM " + w[0]).rdd().getNumPartitions() >= 3, w[0] + ": splits");
      long before = GpudfBackend.get().splitsLeftToSpark();
      same(rows(sql, false), rows(sql, true));
      same(rows("SELECT * FROM " + w[0], false), rows("SELECT * FROM " + w[0], true));
      long toSpark = GpudfBackend.get().splitsLeftToSpark() - before;
      assertTrue(plan(sql).contains("GpudfParquetScan"), plan(sql));
      if (w[0].equals("v2")) {
        assertTrue(toSpark > 0, "version-2 pages went to Spark's reader");
      } else {
        assertEquals(0, toSpark, "splits of PLAIN strings left to Spark's reader");
      }
    }
  }

  /**
   * A partitioned table (Hive's directories, {@code p=1/q=x/}, a NULL partition value among them):
   * each split's rows get its partition values, as Spark's reader gives them; filters on partition
   * columns prune directories (Spark's), on data columns skip row groups.
   */
  @Test
  void partitionColumnsHoldEachSplitsValues() {
    Path parted = dir.resolve("parted");
    spark.sql("SELECT id, CAST(id % 11 AS INT) AS k, concat('v', CAST(id % 13 AS STRING)) AS s, CAST(id % 3 AS INT) AS p,"
        + " CASE WHEN id % 4 = 0 THEN NULL ELSE concat('é', CAST(id % 4 AS STRING)) END AS q,"
        + " date_add(DATE '2020-01-01', CAST(id % 2 AS INT)) AS day FROM range(0, 60000, 1, 2)")
        .write().partitionBy("p", "q", "day").parquet(parted.toString());
    spark.read().parquet(parted.toString()).createOrReplaceTempView("parted");
    for (String sql : List.of("SELECT * FROM parted", "SELECT p, q, day, COUNT(*), SUM(id), MAX(s) FROM parted GROUP BY p, q, day",
        "SELECT id, q FROM parted WHERE p = 1 AND q IS NULL AND id < 30000",
        "SELECT s, p FROM parted WHERE q = 'é2' OR day = DATE '2020-01-02'")) {
      long before = GpudfBackend.get().splitsLeftToSpark();
      same(rows(sql, false), rows(sql, true));
      assertEquals(before, GpudfBackend.get().splitsLeftToSpark(), sql + ": splits left to Spark's reader");
      assertTrue(plan(sql).contains("GpudfParquetScan"), sql + ": " + plan(sql));
    }
  }

  /**
   * Dates Spark would rebase from the hybrid Julian calendar (a file whose footer says Spark 2.4 wrote
   * it, or Spark 3 in its legacy mode) go to Spark's reader: dates before 1582 differ between the two
   * calendars, so reading them as stored would answer otherwise than Spark. A file Spark 3+ wrote
   * in the modern calendar is gpudf's.
   */
  @Test
  void datesSparkWouldRebaseGoToItsReader() throws Exception {
    org.apache.parquet.schema.MessageType schema = org.apache.parquet.schema.MessageTypeParser.parseMessageType(
        "message m { required int64 id; optional int32 d (DATE); }");
    String[][] footers = {{"2.4.8", null, "yes"}, {"3.5.1", "", "yes"}, {"4.0.1", null, "no"}};
    for (int w = 0; w < footers.length; w++) {
      Path table = dir.resolve("dates" + w);
      Files.createDirectories(table);
      java.util.Map<String, String> meta = new java.util.HashMap<>();
      meta.put("org.apache.spark.version", footers[w][0]);
      if (footers[w][1] != null) {
        meta.put("org.apache.spark.legacyDateTime", footers[w][1]);
      }
      org.apache.parquet.example.data.simple.SimpleGroupFactory rows =
          new org.apache.parquet.example.data.simple.SimpleGroupFactory(schema);
      try (org.apache.parquet.hadoop.ParquetWriter<org.apache.parquet.example.data.Group> out =
          org.apache.parquet.hadoop.example.ExampleParquetWriter.builder(
              new org.apache.hadoop.fs.Path(table.resolve("part-0.parquet").toUri()))
              .withType(schema).withExtraMetaData(meta).build()) {
        for (int i = 0; i < 1000; i++) {
          // from about the year 600 on, across 1582
          out.write(rows.newGroup().append("id", (long) i).append("d", -500_000 + i * 400));
        }
      }
      spark.read().parquet(table.toString()).createOrReplaceTempView("dates" + w);
      String sql = "SELECT id, d, year(d) FROM dates" + w;
      long before = GpudfBackend.get().splitsLeftToSpark();
      same(rows(sql, false), rows(sql, true));
      assertEquals(footers[w][2].equals("yes"), GpudfBackend.get().splitsLeftToSpark() > before,
          "Spark " + footers[w][0] + (footers[w][1] != null ? " (legacy dates)" : "") + ": left to Spark's reader");
    }
  }

  @Test
  void typesTheDecoderDoesNotGiveLeaveTheScanToSpark() {
    Path wide = dir.resolve("wide");
    spark.sql("SELECT id, CAST(id AS DECIMAL(24, 3)) AS big, id % 2 = 0 AS flag FROM range(0, 1000)")
        .write().parquet(wide.toString());
    spark.read().parquet(wide.toString()).createOrReplaceTempView("wide");
    String sql = "SELECT SUM(big), COUNT(*) FROM wide WHERE flag";
    same(rows(sql, false), rows(sql, true));
    assertFalse(plan(sql).contains("GpudfParquetScan"), plan(sql));
    // the columns it does give, read alone, are its
    assertTrue(plan("SELECT SUM(id) FROM wide").contains("GpudfParquetScan"));
  }

  /**
   * Row groups whose statistics prove that no row passes Spark's pushed-down filters are not read:
   * the bounds of one row group in the middle of a file, each compared at its edge (a skip one value
   * too eager loses that row), equal to Spark's answers, with row groups skipped where the filter
   * proves it.
   */
  @Test
  void rowGroupsTheFiltersRuleOutAreSkipped() throws Exception {
    Path file;
    try (var list = Files.list(dir.resolve("t"))) {
      file = list.filter(p -> p.toString().endsWith(".parquet")).sorted().findFirst().orElseThrow();
    }
    dev.gpudf.formats.ParquetRowGroups g = dev.gpudf.formats.ParquetRowGroups.open(file, List.of("id", "d", "name"),
        List.of(dev.gpudf.columnar.DataType.INT64, dev.gpudf.columnar.DataType.DATE, dev.gpudf.columnar.DataType.STRING));
    int mid = g.count() / 2;
    long lo = (Long) g.range(mid, 0).min();
    long hi = (Long) g.range(mid, 0).max();
    assertTrue(lo < hi && g.count() >= 8, lo + " .. " + hi + " in " + g.count() + " row groups");
    List<String> filters = List.of("id = " + lo, "id = " + hi, "id >= " + hi, "id > " + (hi - 1), "id <= " + lo,
        "id < " + (lo + 1), "id > " + hi + " AND id < " + (hi + 3), "id BETWEEN " + lo + " AND " + hi,
        "id IN (" + lo + ", " + hi + ", -5)", "id < " + lo + " OR id > " + hi, "k IS NULL", "name IS NULL AND id = " + hi,
        "d = DATE '1995-01-01' AND id <= " + hi, "name = 'n" + (lo % 5000 | 1) + "' AND id >= " + lo,
        "id = " + lo + " OR k = 3", "NOT (id > " + lo + ")");
    for (String f : filters) {
      String sql = "SELECT id, k, name, d FROM t WHERE " + f;
      long before = GpudfBackend.get().rowGroupsSkipped();
      same(rows(sql, false), rows(sql, true));
      long skipped = GpudfBackend.get().rowGroupsSkipped() - before;
      System.out.println("WHERE " + f + ": " + skipped + " row groups skipped");
      if (f.equals("id = " + lo) || f.equals("k IS NULL")) {
        assertTrue(skipped >= g.count(), f + ": " + skipped + " row groups skipped");
      }
    }
    assertTrue(plan("SELECT id FROM t WHERE id = " + lo).contains("GpudfParquetScan"));
  }

  @Test
  void aCountOfRowsReadsNoColumns() {
    String sql = "SELECT COUNT(*) FROM t";
    same(List.of("[200000]"), rows(sql, true));
    same(rows(sql, false), rows(sql, true));
    // a count over a column the scan reads counts every row group of every split
    same(List.of("[200000]"), rows("SELECT COUNT(id) FROM t", true));
    assertTrue(plan("SELECT COUNT(id) FROM t").contains("GpudfParquetScan"));
  }

  @Test
  void turnedOffBySetting() {
    spark.conf().set(GpudfParquetScanExec.ENABLED, "false");
    try {
      assertFalse(plan("SELECT SUM(k) FROM t").contains("GpudfParquetScan"));
    } finally {
      spark.conf().unset(GpudfParquetScanExec.ENABLED);
    }
    assertTrue(plan("SELECT SUM(k) FROM t").contains("GpudfParquetScan"));
  }
}
