package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.files.ArrowIpcSource;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file table's first chunk is read while its statement is planned ({@link EarlyReads}): with
 * the columns the statement names, a scan takes the ones it needs out of a wider read, the answer
 * is the one read at the scan gives, and a read no scan takes, or whose statement fails, is freed.
 */
class EarlyReadsTest {
  /** 4,000 rows of k = 0, 1, 2, ..., k2 = k % 7 and k3 = k % 11, in chunks of 2,000 rows, as table t. */
  private static RecordingSource register(GpuSession s, Path dir, RootAllocator a) throws Exception {
    Path file = dir.resolve("t.arrow");
    if (!file.toFile().exists()) {
      try (RootAllocator w = new RootAllocator(); BigIntVector k = new BigIntVector("k", w);
          BigIntVector k2 = new BigIntVector("k2", w); BigIntVector k3 = new BigIntVector("k3", w);
          VectorSchemaRoot root = VectorSchemaRoot.of(k, k2, k3);
          FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
          ArrowFileWriter out = new ArrowFileWriter(root, null, ch)) {
        out.start();
        for (int b = 0; b < 2; b++) {
          k.allocateNew(2000);
          k2.allocateNew(2000);
          k3.allocateNew(2000);
          for (int r = 0; r < 2000; r++) {
            long v = b * 2000L + r;
            k.set(r, v);
            k2.set(r, v % 7);
            k3.set(r, v % 11);
          }
          root.setRowCount(2000);
          out.writeBatch();
        }
        out.end();
      }
    }
    RecordingSource src = new RecordingSource(ArrowIpcSource.open(file, a, 2000));
    s.catalog().register("t", src);
    return src;
  }

  @Test
  void aScanTakesItsColumnsOutOfTheWiderReadStartedWhilePlanning(@TempDir Path dir) throws Exception {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, dir, a);
      // k3 is only an alias: the plan scans k and k2, the early read takes k, k2 and k3
      try (VectorSchemaRoot r = s.query("SELECT SUM(k2) AS k3, SUM(k) FROM t WHERE k2 < 3")) {
        long k2 = 0;
        long k = 0;
        for (long v = 0; v < 4000; v++) {
          if (v % 7 < 3) {
            k2 += v % 7;
            k += v;
          }
        }
        assertEquals(k2, ((Number) r.getVector(0).getObject(0)).longValue());
        assertEquals(k, ((Number) r.getVector(1).getObject(0)).longValue());
      }
      assertEquals(List.of("0 gpudf-chunk-reader", "1 gpudf-chunk-reader"), src.reads);
      assertEquals(List.of(3, 2), src.widths, "chunk 0 with every column named, chunk 1 with the scan's");
      assertEquals(new Catalog.ReadsAhead(2, 2), s.catalog().readsAhead(), "both taken by their scans");
      assertEquals(0, a.getAllocatedMemory(), "the third column of chunk 0 was freed");
      // planned once: the cached plan runs with no early read, its union reads ahead as before
      s.query("SELECT SUM(k2) AS k3, SUM(k) FROM t WHERE k2 < 3").close();
      assertEquals(List.of(3, 2, 2, 2), src.widths);
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  @Test
  void aStarUnderExistsReadsNoColumnAndOneElsewhereNoEarlyRead(@TempDir Path dir) throws Exception {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, dir, a);
      // the validator expands EXISTS's * into k, k2 and k3: the names come from the statement as written
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*) FROM t WHERE EXISTS (SELECT * FROM t AS u WHERE u.k = t.k + 1)")) {
        assertEquals(3999L, ((Number) r.getVector(0).getObject(0)).longValue());
      }
      assertEquals(1, src.widths.get(0), "the early read of chunk 0 takes k alone: " + src.widths);
      assertTrue(src.widths.stream().allMatch(w -> w == 1), src.widths.toString());
      assertEquals(0, a.getAllocatedMemory());
      src.reads.clear();
      src.widths.clear();
      // every column: the statement names none, so nothing is read before its scans read
      try (VectorSchemaRoot r = s.query("SELECT * FROM t WHERE k2 = 6 AND k3 = 10")) {
        assertEquals(java.util.stream.LongStream.range(0, 4000).filter(v -> v % 7 == 6 && v % 11 == 10).count(),
            r.getRowCount());
      }
      assertEquals(List.of(3, 3), src.widths);
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  /**
   * A Hive-partitioned table filtered on its key: chunk 0 (year 2023) is dropped by planning, so
   * it is not read early either, and only the two chunks of 2024 are read.
   */
  @Test
  void aChunkAFilterMayDropIsNotReadEarly(@TempDir Path dir) throws Exception {
    List<String> parts = List.of("year=2023", "year=2024/a", "year=2024/b", "year=2025");
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      FileTables.loadDirectory(s.catalog(), dir, a);
      for (int p = 0; p < parts.size(); p++) {
        java.nio.file.Files.createDirectories(dir.resolve("sales/" + parts.get(p)));
        s.update("COPY (SELECT x + " + (10 * p) + " AS x FROM (VALUES (1), (2), (3)) AS t(x)) TO 'sales/" + parts.get(p)
            + "/part.arrow' (FORMAT arrow)");
      }
    }
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      FileTables.loadDirectory(s.catalog(), dir, a);
      try (VectorSchemaRoot r = s.query("SELECT SUM(x) FROM sales WHERE \"year\" = 2024")) {
        assertEquals(11L + 12 + 13 + 21 + 22 + 23, ((Number) r.getVector(0).getObject(0)).longValue());
      }
      assertEquals(new Catalog.ReadsAhead(2, 2), s.catalog().readsAhead(), "the two chunks of 2024 only");
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  /** Join keys compare columns with columns: only columns compared with constants can drop a chunk. */
  @Test
  void theColumnsComparedWithConstantsAreThoseOfFilters() throws Exception {
    EarlyReads.Names n = EarlyReads.names(org.apache.calcite.sql.parser.SqlParser.create(
        "SELECT SUM(l.x) FROM l JOIN o ON l.k = o.k WHERE d > DATE '1995-01-01' - INTERVAL '1' DAY"
            + " AND m IN ('x', 'y') AND q BETWEEN 1 AND 2 AND c LIKE 'a%' AND y + 1 = 2025 AND 3 < z AND l.j <> o.j + 1",
        GpuSession.PARSER).parseQuery());
    assertEquals(new java.util.TreeSet<>(List.of("c", "d", "m", "q", "y", "z")),
        new java.util.TreeSet<>(n.comparedWithConstants()));
    assertTrue(n.all().containsAll(List.of("l", "o", "x", "k", "j")), n.all().toString());
    assertEquals(null, EarlyReads.names(org.apache.calcite.sql.parser.SqlParser.create("SELECT * FROM l",
        GpuSession.PARSER).parseQuery()));
  }

  @Test
  void aStatementThatFailsAfterValidationFreesItsEarlyRead(@TempDir Path dir) throws Exception {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, dir, a);
      UserException e = assertThrows(UserException.class, () -> s.query("SELECT SUM(k) FROM t WHERE k2 = ?").close());
      assertTrue(e.getMessage().contains("parameters"), e.getMessage());
      assertEquals(List.of("0 gpudf-chunk-reader"), src.reads, "read while planning");
      assertEquals(new Catalog.ReadsAhead(1, 0), s.catalog().readsAhead());
      assertEquals(0, a.getAllocatedMemory(), "and freed with the statement");
    }
  }

  @Test
  void explainingAStatementReadsNothing(@TempDir Path dir) throws Exception {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, dir, a);
      assertTrue(s.explain("SELECT SUM(k) FROM t WHERE k2 = 1").contains("GpuTableScan"));
      assertEquals(List.of(), src.reads);
    }
  }
}
