package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Arrow IPC files as tables kept in their files ({@link dev.gpudf.sql.files.ArrowIpcSource}). */
class ArrowIpcTablesTest {
  /** Writes {@code batches} record batches of {@code rows} rows: k = 0, 1, 2, ... and s = 'v' + k, every 7th NULL. */
  private static void write(Path file, int batches, int rows) throws Exception {
    try (RootAllocator a = new RootAllocator(); BigIntVector k = new BigIntVector("k", a);
        VarCharVector s = new VarCharVector("s", a); VectorSchemaRoot root = VectorSchemaRoot.of(k, s);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
      w.start();
      for (int b = 0; b < batches; b++) {
        k.allocateNew(rows);
        s.allocateNew(rows);
        for (int r = 0; r < rows; r++) {
          long v = (long) b * rows + r;
          k.set(r, v);
          if (v % 7 == 0) {
            s.setNull(r);
          } else {
            s.setSafe(r, ("v" + v).getBytes(java.nio.charset.StandardCharsets.UTF_8));
          }
        }
        root.setRowCount(rows);
        w.writeBatch();
      }
      w.end();
    }
  }

  @Test
  void batchesAreReadPerChunkOnlyWhenScanned(@TempDir Path dir) throws Exception {
    write(dir.resolve("t.arrow"), 9, 1000);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      FileTables.loadDirectory(s.catalog(), dir, a, 3000);
      assertEquals(0, a.getAllocatedMemory(), "nothing is read at open");
      assertTrue(s.catalog().inFiles("t"));
      assertEquals(List.of(3000, 3000, 3000), s.catalog().shape("t").chunkRows());
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*), COUNT(s), SUM(k), MAX(s) FROM t WHERE k >= 10")) {
        assertEquals(8990L, ((Number) r.getVector(0).getObject(0)).longValue());
        long nulls = java.util.stream.LongStream.range(10, 9000).filter(v -> v % 7 == 0).count();
        assertEquals(8990L - nulls, ((Number) r.getVector(1).getObject(0)).longValue());
        assertEquals(java.util.stream.LongStream.range(10, 9000).sum(), ((Number) r.getVector(2).getObject(0)).longValue());
        assertEquals("v999", r.getVector(3).getObject(0).toString());
      }
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*) FROM t")) {
        assertEquals(9000L, ((Number) r.getVector(0).getObject(0)).longValue());
      }
      Files.delete(dir.resolve("t.arrow"));
      write(dir.resolve("t.arrow"), 2, 10);
      UserException e = assertThrows(UserException.class, () -> s.query("SELECT MAX(k) FROM t").close());
      assertTrue(e.getMessage().contains("t.arrow") && e.getMessage().contains("changed"), e.getMessage());
    }
  }

  /**
   * A GPU catalog keeps the columns a scan read from the files on the device: the same query
   * again reads nothing; with the budget at 0 every column chunk is dropped and read again (and
   * counted as re-read), with the same answer; a file changed after its columns were kept is an
   * error naming it, not the old rows.
   */
  @RequiresGpu
  @Test
  void aGpuCatalogKeepsWhatItReadWithinItsBudgetAndReadsTheRestAgain(@TempDir Path dir) throws Exception {
    write(dir.resolve("t.arrow"), 9, 1000);
    String q = "SELECT COUNT(*), COUNT(s), SUM(k), MAX(s) FROM t WHERE k >= 10";
    long nulls = java.util.stream.LongStream.range(10, 9000).filter(v -> v % 7 == 0).count();
    List<Object> want = List.of(8990L, 8990L - nulls, java.util.stream.LongStream.range(10, 9000).sum(), "v999");
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 64L << 20);
        GpuSession s = GpuSession.gpu(gpu, a)) {
      FileTables.loadDirectory(s.catalog(), dir, a, 3000);
      for (int run = 0; run < 2; run++) {
        assertEquals(want, answer(s, q), "run " + run);
        Catalog.FileReads reads = s.catalog().fileReads();
        assertEquals(6, reads.columnChunks(), "two columns of each of three chunks, read once: run " + run);
        assertEquals(reads.bytes(), s.catalog().residency("t").deviceBytes());
        assertEquals(0, reads.rereadColumnChunks());
      }
      s.catalog().deviceBudget(0);
      assertEquals(0, s.catalog().residency().deviceBytes(), "nothing held past a budget of 0 bytes");
      long before = s.catalog().fileReads().bytes();
      assertEquals(want, answer(s, q), "read again");
      Catalog.FileReads reads = s.catalog().fileReads();
      assertEquals(6, reads.rereadColumnChunks());
      assertEquals(before, reads.rereadBytes());
      assertTrue(s.catalog().residency().deviceBytes() < before, "the budget holds between scans");
      s.catalog().deviceBudget(Long.MAX_VALUE);
      assertEquals(want, answer(s, q), "kept again");
      Files.delete(dir.resolve("t.arrow"));
      write(dir.resolve("t.arrow"), 9, 1000);
      Files.setLastModifiedTime(dir.resolve("t.arrow"), java.nio.file.attribute.FileTime.fromMillis(0));
      UserException e = assertThrows(UserException.class, () -> s.query(q).close());
      assertTrue(e.getMessage().contains("t.arrow") && e.getMessage().contains("changed"), e.getMessage());
    }
  }

  /**
   * A count of rows reads no column of a table kept in files (the chunks' row counts come from
   * the metadata), on a chunked and a one-chunk table, and with other counts beside it.
   */
  @Test
  void aCountOfRowsReadsNoColumn(@TempDir Path dir) throws Exception {
    write(dir.resolve("t.arrow"), 9, 1000);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource chunked = new RecordingSource(dev.gpudf.sql.files.ArrowIpcSource.open(dir.resolve("t.arrow"), a, 3000));
      RecordingSource whole = new RecordingSource(dev.gpudf.sql.files.ArrowIpcSource.open(dir.resolve("t.arrow"), a, 9000));
      s.catalog().register("t", chunked);
      s.catalog().register("w", whole);
      assertEquals(List.of(9000L), answer(s, "SELECT COUNT(*) FROM t"));
      assertEquals(List.of(9000L, 1L), answer(s, "SELECT COUNT(*), COUNT(*) / 9000 FROM w"));
      assertTrue(s.explain("SELECT COUNT(*) FROM t").contains("columns: ]]"), s.explain("SELECT COUNT(*) FROM t"));
      assertEquals(List.of(0, 0, 0), chunked.widths);
      assertEquals(List.of(0), whole.widths);
      assertEquals(List.of(9000L - 1286), answer(s, "SELECT COUNT(s) FROM t"));
      assertEquals(List.of(0, 0, 0, 1, 1, 1), chunked.widths, "a count of values reads their column");
    }
  }

  /** The one row of {@code q}'s answer, strings as strings. */
  private static List<Object> answer(GpuSession s, String q) {
    try (VectorSchemaRoot r = s.query(q)) {
      List<Object> row = new java.util.ArrayList<>();
      for (int c = 0; c < r.getFieldVectors().size(); c++) {
        Object v = r.getVector(c).getObject(0);
        row.add(v instanceof Number n ? (Object) n.longValue() : v.toString());
      }
      return row;
    }
  }

  @Test
  void aTruncatedFileIsAnErrorNamingIt(@TempDir Path dir) throws Exception {
    Path whole = dir.resolve("whole.bin");
    write(whole, 3, 100);
    byte[] bytes = Files.readAllBytes(whole);
    Files.delete(whole);
    Files.write(dir.resolve("cut.arrow"), java.util.Arrays.copyOf(bytes, bytes.length - 20));
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      UserException e = assertThrows(UserException.class, () -> FileTables.loadDirectory(s.catalog(), dir, a));
      assertTrue(e.getMessage().contains("cut.arrow"), e.getMessage());
    }
  }
}
