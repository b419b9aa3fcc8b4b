package dev.gpudf.sql.files;

import dev.gpudf.formats.ParquetFooter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Parquet table's chunks end before their string columns pass the byte cap as well as the row
 * cap ({@link ParquetFooter#stringBytes}, {@link ChunkSource#group}), so that a wide string column
 * does not outgrow the one Arrow vector a chunk's column is: for PLAIN strings (the uncompressed
 * size tells) and for dictionary-encoded ones (each distinct string counted once there, and
 * DuckDB cuts long statistics short, so the estimate takes the dictionary page's mean entry);
 * every row is still read, once, in order.
 */
class ParquetChunkStringsTest {
  // 20,000 rows of ~1,000-byte strings: ~20 MB of string data, row groups of 2,048
  private static Path write(Path dir, String name, String string) throws Exception {
    Path file = dir.resolve(name);
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (SELECT i, " + string + " AS s FROM range(20000) r(i)) TO '" + file
          + "' (FORMAT parquet, ROW_GROUP_SIZE 2048)");
    }
    return file;
  }

  /** Reads every chunk's s; checks its rows and that no chunk holds more than {@code most} bytes of it. */
  private static void check(Path file, long cap, long most, int atLeast) {
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(file, a, 1 << 20, cap)) {
      List<Integer> chunks = source.chunkRows();
      assertTrue(chunks.size() >= atLeast, file + ": " + chunks);
      long next = 0;
      for (int c = 0; c < chunks.size(); c++) {
        try (VectorSchemaRoot r = source.read(c, new int[] {0, 1}, a)) {
          assertEquals(chunks.get(c), r.getRowCount());
          VarCharVector s = (VarCharVector) r.getVector(1);
          long bytes = s.getOffsetBuffer().getInt(4L * r.getRowCount());
          assertTrue(bytes <= most, "chunk " + c + " of " + file + " holds " + bytes + " bytes of strings");
          for (int i = 0; i < r.getRowCount(); i++) {
            assertEquals(next++, ((Number) r.getVector(0).getObject(i)).longValue());
          }
        }
      }
      assertEquals(20000, next);
    }
  }

  @Test
  void chunksOfWidePlainStringsEndAtTheByteCap(@TempDir Path dir) throws Exception {
    Path file = write(dir, "plain.parquet", "repeat(chr(97 + (i % 26)::INTEGER), 1000) || i");
    check(file, 4 << 20, 6 << 20, 4);
    // without a byte cap the row cap alone makes one chunk: the cap is what splits it
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(file, a, 1 << 20, Long.MAX_VALUE)) {
      assertEquals(List.of(20000), source.chunkRows());
    }
  }

  @Test
  void chunksOfWideDictionaryStringsEndAtTheByteCapToo(@TempDir Path dir) throws Exception {
    // three distinct values: DuckDB writes a dictionary, whose uncompressed size is a few KB a row group
    Path file = write(dir, "dict.parquet", "repeat(chr(120 + (i % 3)::INTEGER), 1000)");
    check(file, 4 << 20, 6 << 20, 4);
  }

  /**
   * PLAIN strings are charged what their uncompressed size bounds, so a chunk fills to the cap;
   * dictionary strings twice their estimate, which can fall short: the same 20 MB of strings are
   * one chunk under a 24 MB cap as PLAIN and more than one as a dictionary.
   */
  @Test
  void plainStringsFillAChunkToTheCapAndEstimatedOnesHalfOfIt(@TempDir Path dir) throws Exception {
    Path plain = write(dir, "plain.parquet", "repeat(chr(97 + (i % 26)::INTEGER), 1000) || i");
    Path dict = write(dir, "dict.parquet", "repeat(chr(120 + (i % 3)::INTEGER), 1000) || (i % 2)");
    check(plain, 24 << 20, 24 << 20, 1);
    check(dict, 24 << 20, 12 << 20, 2);
    try (RootAllocator a = new RootAllocator(); ParquetSource p = ParquetSource.open(plain, a, 1 << 20, 24 << 20);
        ParquetSource d = ParquetSource.open(dict, a, 1 << 20, 24 << 20)) {
      assertEquals(List.of(20000), p.chunkRows());
      assertTrue(d.chunkRows().size() >= 2, "dictionary strings: " + d.chunkRows());
    }
  }

  /** Byte estimates near Long.MAX_VALUE (a footer's counts are not trusted) still cut chunks, never wrap around. */
  @Test
  void hugeByteEstimatesCutChunksWithoutOverflow() {
    long half = Long.MAX_VALUE / 2 + 1;
    List<Integer> rows = new java.util.ArrayList<>();
    List<Integer> first = new java.util.ArrayList<>();
    ChunkSource.group(List.of(10, 10, 10), 1000, new long[] {half, half, 1}, Long.MAX_VALUE, rows, first);
    assertEquals(List.of(10, 20), rows);
    assertEquals(List.of(0, 1, 3), first);
  }

  @Test
  void aFileWithoutStringsIsCutByRowsOnly(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("ints.parquet");
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (SELECT i FROM range(20000) r(i)) TO '" + file + "' (FORMAT parquet, ROW_GROUP_SIZE 2048)");
    }
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(file, a, 1 << 20, 1)) {
      assertEquals(List.of(20000), source.chunkRows());
    }
  }
}
