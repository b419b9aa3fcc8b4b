package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chunks skipped by what the files say: a Hive-partitioned table (BIGINT, VARCHAR with a NULL
 * partition, and DATE keys; one chunk a file) scanned under filters on its keys reads only the
 * partitions that can match (EXPLAIN lists fewer chunk scans), and every filter, at and around
 * each boundary, answers exactly as the same rows held resident (no skipping) do: a wrong skip
 * fails here.
 */
class ChunkPruningTest {
  private static final List<String> PARTS = List.of("year=2023/region=eu/day=2024-01-01", "year=2023/region=us/day=2024-01-02",
      "year=2024/region=eu/day=2024-01-02", "year=2024/region=__HIVE_DEFAULT_PARTITION__/day=2024-01-03",
      "year=2024/region=us/day=2024-01-03", "year=2025/region=eu/day=2024-02-01", "year=2025/region=été/day=2024-02-01",
      "year=2025/region=us/day=2024-03-01");

  @Test
  void filtersOnPartitionKeysSkipChunksAndAnswerAsTheWholeTable(@TempDir Path dir) throws Exception {
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      FileTables.loadDirectory(s.catalog(), dir, allocator);
      for (int p = 0; p < PARTS.size(); p++) {
        Files.createDirectories(dir.resolve("sales/" + PARTS.get(p)));
        s.update("COPY (SELECT x + " + (10 * p) + " AS x FROM (VALUES (1), (2), (3)) AS t(x)) TO 'sales/" + PARTS.get(p)
            + "/part.arrow' (FORMAT arrow)");
      }
    }
    try (RootAllocator allocator = new RootAllocator(); GpuSession s = GpuSession.cpu(allocator)) {
      assertTrue(FileTables.loadDirectory(s.catalog(), dir, allocator).contains("sales"));
      s.update("CREATE TABLE resident AS SELECT * FROM sales");
      List<String> filters = List.of("\"year\" = 2024", "\"year\" <> 2024", "\"year\" < 2024", "\"year\" <= 2024",
          "\"year\" > 2024", "\"year\" >= 2025", "\"year\" > 2025", "\"year\" < 2023", "2024 < \"year\"", "2024 >= \"year\"",
          "\"year\" IN (2023, 2025)", "\"year\" BETWEEN 2024 AND 2030", "\"year\" NOT IN (2024)", "\"year\" = 2024.5",
          "region = 'eu'", "region <> 'eu'", "region IS NULL", "region IS NOT NULL", "region < 'f'", "region >= 'us'",
          "region > 'us'", "region = 'été'", "region IN ('us', 'zz')", "region = 'eu' OR \"year\" = 2025",
          "region = 'eu' AND \"year\" = 2023", "x > 25 AND \"year\" = 2024", "\"year\" = 2024 OR x = 3",
          "NOT (\"year\" = 2024)", "\"year\" + 1 = 2025", "region LIKE 'e%'", "\"day\" = DATE '2024-01-02'",
          "\"day\" > DATE '2024-01-31'", "\"day\" BETWEEN DATE '2024-01-02' AND DATE '2024-01-03'", "\"day\" < DATE '2024-01-01'",
          "\"year\" = 2024 AND region IS NULL", "COALESCE(region, 'none') = 'none'", "\"year\" = 2024 AND \"year\" = 2025");
      SkipChecks.sameAsResident(s, "SELECT COUNT(*), SUM(x), MIN(region), MAX(\"day\") FROM $t", "sales", "resident", filters);
      assertEquals(3, scans(s, "\"year\" = 2024"));
      assertEquals(5, scans(s, "\"year\" <> 2024"));
      assertEquals(2, scans(s, "\"year\" < 2024"));
      assertEquals(3, scans(s, "2024 < \"year\""));
      assertEquals(2, scans(s, "\"year\" = 2025 AND region IN ('us', 'été')"));
      assertEquals(1, scans(s, "region IS NULL"));
      assertEquals(2, scans(s, "\"day\" = DATE '2024-01-02'"));
      assertEquals(0, scans(s, "\"year\" > 2025"));
      assertEquals(8, scans(s, "\"year\" = 2024 OR x = 3"), "a filter any chunk may pass keeps them all");
      // the catalog counts what planning skipped: the figure a report gives of statistics' work
      Catalog.ChunkScans before = s.catalog().chunkScans();
      assertEquals(2, scans(s, "\"year\" < 2024"));
      Catalog.ChunkScans after = s.catalog().chunkScans();
      assertEquals(new Catalog.ChunkScans(8, 6, 0), new Catalog.ChunkScans(after.filtered() - before.filtered(),
          after.skipped() - before.skipped(), after.partitioned() - before.partitioned()));
    }
  }

  private static int scans(GpuSession s, String filter) {
    return SkipChecks.scans(s, "sales", "x", filter);
  }
}
