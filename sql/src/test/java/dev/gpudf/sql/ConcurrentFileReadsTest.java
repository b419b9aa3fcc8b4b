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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host catalog's file reads run outside its lock: while one query's read of a table is held,
 * another query over another table of the same session plans, reads and answers; a table dropped
 * while its read is held fails that read, naming the drop, and nothing leaks.
 */
class ConcurrentFileReadsTest {
  /** 4,000 rows of k = 0 .. 3,999 in chunks of 2,000 rows as file {@code name}.arrow, registered as table {@code name}. */
  private static RecordingSource table(GpuSession s, Path dir, String name, RootAllocator a) throws Exception {
    Path file = dir.resolve(name + ".arrow");
    try (RootAllocator w = new RootAllocator(); BigIntVector k = new BigIntVector("k", w);
        VectorSchemaRoot root = VectorSchemaRoot.of(k);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        ArrowFileWriter out = new ArrowFileWriter(root, null, ch)) {
      out.start();
      for (int b = 0; b < 2; b++) {
        k.allocateNew(2000);
        for (int r = 0; r < 2000; r++) {
          k.set(r, b * 2000L + r);
        }
        root.setRowCount(2000);
        out.writeBatch();
      }
      out.end();
    }
    RecordingSource src = new RecordingSource(ArrowIpcSource.open(file, a, 2000));
    s.catalog().register(name, src);
    return src;
  }

  private static long sum(GpuSession s, String table) {
    try (VectorSchemaRoot r = s.query("SELECT SUM(k) AS s FROM " + table)) {
      return ((Number) r.getVector(0).getObject(0)).longValue();
    }
  }

  @Test
  void aQueryOverAnotherTableAnswersWhileOnesReadIsHeld(@TempDir Path dir) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource t = table(s, dir, "t", a);
      table(s, dir, "u", a);
      CountDownLatch release = new CountDownLatch(1);
      t.hold = release;
      Future<Long> held = pool.submit(() -> sum(s, "t"));
      try {
        assertTrue(t.reading.await(30, TimeUnit.SECONDS), "t's read began");
        // with t's read held under the catalog's lock, or on reader threads that t's reads ahead took
        // (one holds its source, others wait for it), this waited for it
        Future<Long> other = pool.submit(() -> sum(s, "u"));
        assertEquals(3999L * 4000 / 2, other.get(20, TimeUnit.SECONDS));
      } finally {
        release.countDown();
      }
      assertEquals(3999L * 4000 / 2, held.get(30, TimeUnit.SECONDS));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aTableDroppedWhileItsReadIsHeldFailsItsQuery(@TempDir Path dir) throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      RecordingSource t = table(s, dir, "t", a);
      CountDownLatch release = new CountDownLatch(1);
      t.hold = release;
      Future<Long> held = pool.submit(() -> sum(s, "t"));
      Thread dropper;
      try {
        assertTrue(t.reading.await(30, TimeUnit.SECONDS), "t's read began");
        // the drop takes the catalog's lock and waits at the source for the read under way
        dropper = new Thread(() -> s.catalog().drop("t"), "dropper");
        dropper.start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (dropper.getState() != Thread.State.BLOCKED && System.nanoTime() < until) {
          Thread.sleep(5);
        }
        assertEquals(Thread.State.BLOCKED, dropper.getState(), "the drop waits for the read");
      } finally {
        release.countDown();
      }
      dropper.join(30_000);
      // the scan's next chunk finds the table gone: an error naming it, not rows of half a table
      java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> held.get(30, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof UserException
          && (e.getCause().getMessage().contains("no table 't'") || e.getCause().getMessage().contains("dropped")),
          String.valueOf(e.getCause()));
    } finally {
      pool.shutdownNow();
    }
  }
}
