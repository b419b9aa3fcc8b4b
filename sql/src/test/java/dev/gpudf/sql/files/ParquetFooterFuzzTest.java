package dev.gpudf.sql.files;

import dev.gpudf.kernels.ParquetDecode;
import dev.gpudf.columnar.error.UserException;

import dev.gpudf.formats.ValueRange;
import dev.gpudf.formats.ParquetFooter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged Parquet footers read for their statistics ({@link ParquetFooter}): bits flipped, bytes
 * and the footer length overwritten with edge values, the file cut short. Each read returns row
 * groups whose ranges are ordered (min at most max), returns nothing, or throws an
 * {@link IOException} or a runtime exception, which the source turns into "no statistics"; never
 * an {@link Error} (no allocation sized by a damaged length, no stack overflow). Seeds 1 and a
 * fresh one, printed; {@code -Dgpudf.fuzz.footerSeed=N} replays one.
 */
class ParquetFooterFuzzTest {
  private static final int INPUTS = 3_000;

  @Test
  void damagedFootersGiveNoRangesOrAnErrorNeverACrash(@TempDir Path dir) throws Exception {
    Path good = dir.resolve("good.parquet");
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (SELECT i AS k, CAST(i % 97 AS INTEGER) AS v, 'é' || (i % 13) AS s, DATE '2024-01-01' + CAST(i // 500 AS INTEGER) AS d"
          + " FROM range(20000) r(i)) TO '" + good + "' (FORMAT parquet, ROW_GROUP_SIZE 4096)");
    }
    List<String> names;
    List<DataType> types;
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(good, a, 4096)) {
      names = source.names();
      types = source.types();
      assertNotNull(source.range(0, 0), "the undamaged file has statistics");
    }
    byte[] bytes = Files.readAllBytes(good);
    int footer = footerStart(bytes);
    Long replay = Long.getLong("gpudf.fuzz.footerSeed");
    long[] seeds = replay != null ? new long[] {replay} : new long[] {1, System.nanoTime()};
    System.out.println("ParquetFooterFuzzTest seeds: " + java.util.Arrays.toString(seeds)
        + " (replay one with -Dgpudf.fuzz.footerSeed=N)");
    int read = 0;
    int refused = 0;
    int opened = 0;
    Path bad = dir.resolve("bad.parquet");
    for (long seed : seeds) {
      Random r = new Random(seed);
      for (int i = 0; i < INPUTS / 2; i++) {
        byte[] b = damage(bytes, footer, r);
        Files.write(bad, b);
        try {
          List<ParquetFooter.RowGroup> groups = ParquetFooter.read(bad, names, types);
          read++;
          if (groups != null) {
            for (ParquetFooter.RowGroup g : groups) {
              for (ValueRange v : g.ranges()) {
                assertTrue(v == null || !v.hasValues() || ValueRange.compare(v.min(), v.max()) <= 0,
                    "seed " + seed + " input " + i + ": " + v);
              }
            }
          }
        } catch (IOException | RuntimeException e) {
          refused++;
        }
        try {
          ParquetFooter.Columns columns = ParquetFooter.columns(bad);
          if (columns != null) {
            assertEquals(columns.names().size(), columns.types().size(), "seed " + seed + " input " + i);
            assertTrue(columns.groups().stream().allMatch(g -> g.rows() >= 0), "seed " + seed + " input " + i);
          }
        } catch (IOException | RuntimeException e) {
          // refused, as read refuses
        }
        if (i % 10 == 0) { 
          opened += openAndDecode(bad, "seed " + seed + " input " + i);
        }
      }
    }
    int tried = seeds.length * (INPUTS / 2);
    System.out.printf("ParquetFooterFuzzTest: %d damaged files opened and their first chunk decoded of %d tried%n", opened,
        tried / 10);
    System.out.printf("ParquetFooterFuzzTest: %d damaged footers, %d read, %d refused%n", tried, read, refused);
    assertTrue(refused > tried / 10, "the damage reaches the reader: " + refused + " refused");
  }

  /**
   * Opens a damaged file as a table's source and decodes its first chunk's stored pages: either
   * works, or fails with a {@link UserException} (an error naming the file), never another
   * exception; 1 when it opened.
   */
  private static int openAndDecode(Path file, String what) {
    try (RootAllocator a = new RootAllocator()) {
      try (ParquetSource source = ParquetSource.open(file, a, 8192)) {
        for (int c = 0; c < source.names().size() && !source.chunkRows().isEmpty(); c++) {
          try (ParquetDecode.Chunk pages = source.readEncoded(0, c, a)) {
            if (pages != null) {
              ParquetDecode.decodeOnHost(pages, source.names().get(c), a).close();
            }
          }
        }
        return 1;
      } catch (UserException e) {
        return 0;
      } catch (RuntimeException e) {
        throw new AssertionError(what + ": " + e, e);
      } finally {
        assertEquals(0, a.getAllocatedMemory(), what);
      }
    }
  }

  private static int footerStart(byte[] b) {
    int length = (b[b.length - 8] & 0xff) | (b[b.length - 7] & 0xff) << 8 | (b[b.length - 6] & 0xff) << 16
        | (b[b.length - 5] & 0xff) << 24;
    return b.length - 8 - length;
  }

  private static byte[] damage(byte[] original, int footer, Random r) {
    byte[] b = original.clone();
    int span = b.length - footer;
    switch (r.nextInt(4)) {
      case 0 -> {
        for (int k = 1 + r.nextInt(4); k > 0; k--) {
          int at = footer + r.nextInt(span);
          b[at] ^= (byte) (1 << r.nextInt(8));
        }
      }
      case 1 -> {
        int at = footer + r.nextInt(span - 4);
        int v = new int[] {0, -1, 0x7fffffff, 0x80000000, 1 << 20, 255}[r.nextInt(6)];
        for (int k = 0; k < 4; k++) {
          b[at + k] = (byte) (v >>> (8 * k));
        }
      }
      case 2 -> {
        int v = new int[] {0, -1, 0x7fffffff, span, span + 1, b.length}[r.nextInt(6)];
        for (int k = 0; k < 4; k++) {
          b[b.length - 8 + k] = (byte) (v >>> (8 * k));
        }
      }
      default -> {
        int cut = 1 + r.nextInt(span);
        byte[] shorter = java.util.Arrays.copyOf(b, b.length - cut);
        // keep the tail so the reader finds a footer length that no longer fits
        System.arraycopy(b, b.length - 8, shorter, shorter.length - 8, Math.min(8, shorter.length));
        return shorter;
      }
    }
    return b;
  }
}
