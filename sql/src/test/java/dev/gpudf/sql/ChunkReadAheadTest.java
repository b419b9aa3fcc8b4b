package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.files.ArrowIpcSource;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A union of a file table's chunks reads them on the catalog's reader thread, in order, the next
 * while the one before it runs ({@link ChunkRead}): same answers, each chunk read once, and nothing read
 * ahead outlives its query, its table or a failure. On the GPU a query's tables are read from its
 * start, each chunk once with the columns of all its scans.
 */
class ChunkReadAheadTest {
  /** The sum of the multiples of 3 among the k of {@link #write}'s 8 batches. */
  private static final long MULTIPLES_OF_3_SUM = java.util.stream.LongStream.range(0, 8000).filter(v -> v % 3 == 0).sum();

  /** Writes {@code batches} batches of 1,000 rows of k = 0, 1, 2, ... */
  private static Path write(Path dir, int batches) throws Exception {
    Path file = dir.resolve("t.arrow");
    try (RootAllocator a = new RootAllocator(); BigIntVector k = new BigIntVector("k", a);
        VectorSchemaRoot root = VectorSchemaRoot.of(k);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
      w.start();
      for (int b = 0; b < batches; b++) {
        k.allocateNew(1000);
        for (int r = 0; r < 1000; r++) {
          k.set(r, b * 1000L + r);
        }
        root.setRowCount(1000);
        w.writeBatch();
      }
      w.end();
    }
    return file;
  }

  /** Writes 3,000 rows of k = 0, 1, 2, ... and k2 = k % 100 as {@code name}. */
  private static Path writeTwo(Path dir, String name) throws Exception {
    Path file = dir.resolve(name);
    try (RootAllocator a = new RootAllocator(); BigIntVector k = new BigIntVector("k", a);
        BigIntVector k2 = new BigIntVector("k2", a); VectorSchemaRoot root = VectorSchemaRoot.of(k, k2);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
      w.start();
      k.allocateNew(3000);
      k2.allocateNew(3000);
      for (int r = 0; r < 3000; r++) {
        k.set(r, r);
        k2.set(r, r % 100);
      }
      root.setRowCount(3000);
      w.writeBatch();
      w.end();
    }
    return file;
  }

  /**
   * A query that scans t twice (other columns each time) and u once: on the GPU both are read
   * from the query's start on the reader thread, t once with both scans' columns, and the
   * answer is the CPU's.
   */
  @dev.gpudf.columnar.testing.RequiresGpu
  @Test
  void onTheGpuAQuerysTablesAreReadFromItsStartEachChunkOnce(@TempDir Path dir) throws Exception {
    Path t = writeTwo(dir, "t.arrow");
    Path u = writeTwo(dir, "u.arrow");
    String sql = "SELECT COUNT(*), SUM(t.k), MIN(u.k2) FROM t JOIN u ON t.k = u.k * 2 WHERE t.k > (SELECT AVG(k2) FROM t)";
    try (RootAllocator a = new RootAllocator(); GpuSession cpu = GpuSession.cpu(a);
        dev.gpudf.columnar.cuda.Gpu gpu = dev.gpudf.columnar.cuda.Gpu.open(0, 1L << 30, 64L << 20);
        GpuSession dev = GpuSession.gpu(gpu, a)) {
      cpu.catalog().register("t", ArrowIpcSource.open(t, a, 1 << 20));
      cpu.catalog().register("u", ArrowIpcSource.open(u, a, 1 << 20));
      RecordingSource ts = new RecordingSource(ArrowIpcSource.open(t, a, 1 << 20));
      RecordingSource us = new RecordingSource(ArrowIpcSource.open(u, a, 1 << 20));
      dev.catalog().register("t", ts);
      dev.catalog().register("u", us);
      List<Object> want;
      try (VectorSchemaRoot r = cpu.query(sql)) {
        want = List.of(r.getVector(0).getObject(0).toString(), r.getVector(1).getObject(0).toString(),
            r.getVector(2).getObject(0).toString());
      }
      try (VectorSchemaRoot r = dev.query(sql)) {
        assertEquals(want, List.of(r.getVector(0).getObject(0).toString(), r.getVector(1).getObject(0).toString(),
            r.getVector(2).getObject(0).toString()));
      }
      assertEquals(List.of("0 gpudf-chunk-reader"), ts.reads, "t read once, from the query's start");
      assertEquals(List.of(2), ts.widths, "with the columns of both its scans");
      assertEquals(List.of("0 gpudf-chunk-reader"), us.reads);
      assertEquals(new Catalog.ReadsAhead(2, 2), dev.catalog().readsAhead());
      // read again, nothing is read: the columns stay on the device
      dev.query(sql).close();
      assertEquals(1, ts.reads.size());
    }
  }

  /** {@code file} as table t of {@code s}, in chunks of 2,000 rows, its reads recorded. */
  private static RecordingSource register(GpuSession s, Path file, org.apache.arrow.memory.BufferAllocator a) {
    RecordingSource src = new RecordingSource(ArrowIpcSource.open(file, a, 2000));
    s.catalog().register("t", src);
    return src;
  }

  @Test
  void chunksAreReadAheadOnTheReaderThreadInOrderOnceEach(@TempDir Path dir) throws Exception {
    Path file = write(dir, 8);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, file, a);
      try (VectorSchemaRoot r = s.query("SELECT SUM(k), COUNT(*) FROM t WHERE k % 3 = 0")) {
        assertEquals(MULTIPLES_OF_3_SUM,
            ((Number) r.getVector(0).getObject(0)).longValue());
        assertEquals(2667L, ((Number) r.getVector(1).getObject(0)).longValue());
      }
      // in order, on one thread: a file read in order is decoded once
      List<String> want = List.of("0 gpudf-chunk-reader", "1 gpudf-chunk-reader", "2 gpudf-chunk-reader", "3 gpudf-chunk-reader");
      assertEquals(want, src.reads);
      assertEquals(new Catalog.ReadsAhead(4, 4), s.catalog().readsAhead());
      assertEquals(0, a.getAllocatedMemory(), "nothing read ahead is left after the query");
    }
  }

  /**
   * A chunk scan that two parts of the plan share (t under IN and under the outer query, with the
   * same column) runs once; the union that comes to it second reads none of its chunks ahead again
   * (each was read a second time and never taken, TPC-H q18's whole lineitem at SF1).
   */
  @Test
  void aSharedChunkScanIsNotReadAheadAgain(@TempDir Path dir) throws Exception {
    Path file = write(dir, 8);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, file, a);
      try (VectorSchemaRoot r = s.query("SELECT COUNT(*), SUM(k) FROM t WHERE k IN (SELECT k FROM t WHERE k % 3 = 0)")) {
        assertEquals(2667L, ((Number) r.getVector(0).getObject(0)).longValue());
        assertEquals(MULTIPLES_OF_3_SUM,
            ((Number) r.getVector(1).getObject(0)).longValue());
      }
      Catalog.ReadsAhead reads = s.catalog().readsAhead();
      assertEquals(reads.started(), reads.taken(), "every chunk read ahead was taken: " + reads + ", reads " + src.reads);
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  /** Chunk 0's branch fails while chunk 1 is read ahead: the query's error, and chunk 1's rows freed with it. */
  @Test
  void aReadNobodyTakesIsFreedWhenItsQueryFails(@TempDir Path dir) throws Exception {
    Path file = write(dir, 4);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, file, a);
      UserException e = assertThrows(UserException.class, () -> s.query("SELECT SUM(10 / (k - 5)) FROM t").close());
      assertTrue(e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("zero"), e.getMessage());
      assertTrue(src.reads.contains("1 gpudf-chunk-reader"), src.reads.toString());
      assertEquals(new Catalog.ReadsAhead(2, 1), s.catalog().readsAhead(), "chunk 1 read ahead, never taken");
      assertEquals(0, a.getAllocatedMemory(), "the unused read ahead was freed");
    }
  }

  /**
   * A table dropped while a chunk of it is being read ahead: the drop waits for the read, which
   * completes; closing the unused read frees its rows; a read queued behind it either ran before
   * the drop or finds the table gone and fails, never touching the closed file.
   */
  @Test
  void aTableDroppedDuringAReadAheadLeavesNothing(@TempDir Path dir) throws Exception {
    Path file = write(dir, 6);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource src = register(s, file, a);
      CountDownLatch hold = new CountDownLatch(1);
      src.hold = hold;
      ChunkRead first = s.catalog().readAhead("t", 1, null);
      ChunkRead queued = s.catalog().readAhead("t", 2, null);
      assertNotNull(first);
      assertTrue(src.reading.await(30, TimeUnit.SECONDS), "the first read started");
      Thread release = new Thread(() -> {
        try {
          Thread.sleep(200);
        } catch (InterruptedException ex) {
          Thread.currentThread().interrupt();
        }
        hold.countDown();
      });
      release.start();
      s.catalog().drop("t");
      release.join();
      assertNull(s.catalog().readAhead("t", 1, null), "no read ahead of a table that is gone");
      try (ChunkColumns before = queued.take(); dev.gpudf.columnar.HostTable rows = before.table(null)) {
        assertEquals(2000, rows.rowCount(), "the queued read ran before the drop");
      } catch (UserException gone) {
        assertTrue(gone.getMessage().contains("dropped or replaced"), gone.getMessage());
      }
      queued.close();
      first.close();
      assertEquals("1 gpudf-chunk-reader", src.reads.get(0));
      assertTrue(src.reads.stream().noneMatch(r -> r.endsWith("after close")), src.reads.toString());
      assertEquals(0, a.getAllocatedMemory());
    }
  }
}
