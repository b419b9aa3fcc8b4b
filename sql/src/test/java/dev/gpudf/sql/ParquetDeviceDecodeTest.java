package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.sql.files.ParquetSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A GPU catalog's scans of Parquet files whose pages the device decodes ({@link ChunkColumns},
 * on by default): answers as the CPU backend's (which decodes every column with Arrow), with
 * NULLs, dictionary and PLAIN pages, Snappy and stored chunks, string columns of both kinds with
 * NULLs and non-ASCII strings, a BOOLEAN column left to Arrow beside them, and a last chunk shorter
 * than the others; and the count of column chunks the
 * device decoded, so a catalog that decoded nothing on the device fails.
 */
class ParquetDeviceDecodeTest {
  // 10,001 rows in row groups of about 1,000 (as DuckDB cuts them): chunks of whole row groups
  private static final String SELECT = "SELECT i::INTEGER AS i, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1000003 END AS b,"
      + " i % 7 AS k, CASE WHEN i % 3 = 0 THEN NULL ELSE i / 8.0 END AS d, DATE '2020-01-01' + (i % 400)::INTEGER AS dt,"
      + " CAST((i - 5000) * 12.34 AS DECIMAL(12, 2)) AS m, CASE WHEN i % 11 = 0 THEN NULL ELSE 'é' || (i % 13) END AS s,"
      + " CASE WHEN i % 17 = 0 THEN NULL ELSE 'ü' || i END AS u, i % 4 = 1 AS f FROM range(10001) r(i)";
  private static final String[] QUERIES = {
      "SELECT COUNT(*), COUNT(b), SUM(i), SUM(b), COUNT(d), MIN(d), MAX(d), MIN(dt), MAX(dt), SUM(m), MAX(s) FROM t",
      "SELECT k, COUNT(*), SUM(b), SUM(m) FROM t WHERE i > 100 AND dt < DATE '2020-06-01' GROUP BY k ORDER BY k",
      "SELECT i, b, d, dt, m, s, u, f FROM t WHERE b % 997 = 3 OR d IS NULL AND i % 1000 = 9 ORDER BY i",
      "SELECT s, COUNT(*), MIN(u), SUM(i) FROM t WHERE s LIKE '%1%' OR s IS NULL GROUP BY s ORDER BY s",
  };

  private static void write(Path file, String codec) throws Exception {
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (" + SELECT + ") TO '" + file + "' (FORMAT parquet, ROW_GROUP_SIZE 1000, COMPRESSION " + codec + ")");
    }
  }

  private static List<List<Object>> rows(GpuSession s, String q) {
    try (VectorSchemaRoot r = s.query(q)) {
      List<List<Object>> out = new ArrayList<>();
      for (int i = 0; i < r.getRowCount(); i++) {
        List<Object> row = new ArrayList<>();
        for (int c = 0; c < r.getFieldVectors().size(); c++) {
          Object v = r.getVector(c).getObject(i);
          row.add(v == null ? null : v.toString());
        }
        out.add(row);
      }
      return out;
    }
  }

  @RequiresGpu
  @Test
  void theDeviceDecodesAChunksPagesAndAnswersAsTheCpu(@TempDir Path dir) throws Exception {
    write(dir.resolve("t.parquet"), "SNAPPY");
    write(dir.resolve("u.parquet"), "UNCOMPRESSED");
    try (RootAllocator a = new RootAllocator(); GpuSession cpu = GpuSession.cpu(a);
        Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20); GpuSession dev = GpuSession.gpu(gpu, a)) {
      FileTables.loadDirectory(cpu.catalog(), dir, a, 3000);
      FileTables.loadDirectory(dev.catalog(), dir, a, 3000);
      for (String table : List.of("t", "u")) {
        for (String q : QUERIES) {
          String sql = q.replace("FROM t", "FROM " + table);
          List<List<Object>> want = rows(cpu, sql);
          assertTrue(!want.isEmpty(), sql);
          assertEquals(want, rows(dev, sql), sql);
        }
      }
      // every column but the BOOLEAN f, of every chunk, of both tables, read once and kept
      int chunks = 0;
      for (String file : List.of("t.parquet", "u.parquet")) {
        try (ParquetSource source = ParquetSource.open(dir.resolve(file), a, 3000)) {
          chunks += source.chunkRows().size();
        }
      }
      assertTrue(chunks >= 8, "chunks of 3,000 rows of 10,001: " + chunks);
      assertEquals(chunks * 8, dev.catalog().fileReads().decodedOnDevice(), dev.catalog().fileReads().toString());
      assertEquals(chunks * 9, dev.catalog().fileReads().columnChunks());
      // their pages as stored: some bytes, less than the files hold; every row of both tables read
      long stored = dev.catalog().fileReads().storedBytes();
      assertTrue(stored > 0 && stored < Files.size(dir.resolve("t.parquet")) + Files.size(dir.resolve("u.parquet")),
          dev.catalog().fileReads().toString());
      assertTrue(dev.catalog().fileReads().rows() >= 2 * 10_001, dev.catalog().fileReads().toString());
    }
  }
}
