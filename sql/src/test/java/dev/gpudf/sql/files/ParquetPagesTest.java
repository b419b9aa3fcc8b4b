package dev.gpudf.sql.files;

import dev.gpudf.formats.ParquetFooter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.ParquetDecode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parquet column chunks handed over as stored pages for the device to decode ({@link
 * ParquetSource#readEncoded}), read from files DuckDB wrote: every column the decoder takes, in
 * every chunk made of whole row groups, decoded by the decoder's CPU twin equals what Arrow's
 * reader gives for it (NULLs, NaN, negative decimals, dictionary and PLAIN pages, Snappy and
 * stored, strings of both kinds with non-ASCII and empty ones); the columns it does not take
 * (booleans, wide decimals, small integers, ZSTD files, chunks that cut a row group, a chunk of
 * strings whose row groups are some dictionary-encoded and some PLAIN) are left to Arrow's reader; a damaged page or page header is an error naming the file,
 * the row group and the column.
 */
class ParquetPagesTest {
  private static final String SELECT = "SELECT"
      + " CASE WHEN i % 7 = 3 THEN NULL ELSE CAST(i * 2654435761 % 1000003 AS INTEGER) END AS i32,"
      + " CASE WHEN i % 11 = 0 THEN NULL ELSE CAST(i % 5 AS INTEGER) END AS small,"
      + " CAST(i AS BIGINT) * 1000000007 - 5000000000000 AS i64,"
      + " DATE '1992-01-01' + CAST(i % 2500 AS INTEGER) AS d,"
      + " CASE WHEN i % 13 = 0 THEN 'NaN'::DOUBLE WHEN i % 13 = 1 THEN -0.0 ELSE i / 7.0 END AS dbl,"
      + " CAST(i / 3.0 AS FLOAT) AS flt,"
      + " CAST((i - 10000) / 100.0 AS DECIMAL(9, 2)) AS dec9,"
      + " CASE WHEN i % 5 = 0 THEN NULL ELSE CAST((i - 10000) * 12345.67 AS DECIMAL(15, 2)) END AS dec15,"
      + " CAST(NULL AS BIGINT) AS nothing,"
      + " CASE WHEN i % 9 = 0 THEN NULL ELSE ['MAIL', '', 'Grüße, 東京', 'DELIVER IN PERSON'][i % 4 + 1] END AS mode,"
      + " 'é' || i AS str, CASE WHEN i < 4096 THEN 'few' || (i % 3) ELSE 'many' || i END AS mixed, i % 2 = 0 AS bool, CAST(i AS DECIMAL(38, 2)) AS dec38, CAST(i % 100 AS TINYINT) AS tiny"
      + " FROM range(20000) r(i)";
  private static final Set<String> DECODED = Set.of("i32", "small", "i64", "d", "dbl", "flt", "dec9", "dec15", "nothing",
      "mode", "str");

  private static Path write(Path dir, String name, String codec) throws Exception {
    Path file = dir.resolve(name);
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (" + SELECT + ") TO '" + file + "' (FORMAT parquet, ROW_GROUP_SIZE 4096, COMPRESSION " + codec + ")");
    }
    return file;
  }

  /** Decodes every column of every chunk both ways; returns how many column chunks went as stored pages. */
  private static int compareEveryChunk(Path file, int chunkRows) {
    int encoded = 0;
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(file, a, chunkRows)) {
      for (int chunk = 0; chunk < source.chunkRows().size(); chunk++) {
        for (int c = 0; c < source.names().size(); c++) {
          String name = source.names().get(c);
          try (ParquetDecode.Chunk pages = source.readEncoded(chunk, c, a)) {
            if (pages == null) {
              continue;
            }
            assertTrue(DECODED.contains(name) || name.equals("mixed") && chunk > 0, name + " is not one the device decodes");
            encoded++;
            try (FieldVector got = ParquetDecode.decodeOnHost(pages, name, a);
                VectorSchemaRoot want = source.read(chunk, new int[] {c}, a)) {
              FieldVector w = want.getVector(0);
              assertEquals(w.getValueCount(), got.getValueCount(), name + " chunk " + chunk);
              for (int r = 0; r < w.getValueCount(); r++) {
                assertEquals(w.getObject(r), got.getObject(r), name + " chunk " + chunk + " row " + r);
              }
            }
          }
        }
      }
      assertEquals(0, a.getAllocatedMemory());
    }
    return encoded;
  }

  @Test
  void storedPagesDecodeAsArrowReadsThem(@TempDir Path dir) throws Exception {
    for (String codec : List.of("snappy", "uncompressed")) {
      Path file = write(dir, codec + ".parquet", codec);
      // chunks of two row groups: 20,000 rows make 3 chunks, the last of one row group of 3,616 rows
      int encoded = compareEveryChunk(file, 8192);
      // and the column of mixed strings where its chunk's row groups are all PLAIN
      assertEquals(DECODED.size() * 3 + 2, encoded, codec + ": every column the device takes, in every chunk");
    }
  }

  @Test
  void whatTheDeviceDoesNotDecodeIsLeftToArrowsReader(@TempDir Path dir) throws Exception {
    assertEquals(0, compareEveryChunk(write(dir, "zstd.parquet", "zstd"), 8192), "ZSTD pages are Arrow's");
    // chunks of 5,000 rows cut row groups: only a chunk that happens to start and end on them is taken
    Path snappy = write(dir, "snappy.parquet", "snappy");
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(snappy, a, 5000)) {
      int i32 = source.names().indexOf("i32");
      for (int chunk = 0; chunk < source.chunkRows().size(); chunk++) {
        long start = source.chunkRows().subList(0, chunk).stream().mapToLong(Integer::longValue).sum();
        long end = start + source.chunkRows().get(chunk);
        boolean whole = start % 4096 == 0 && (end % 4096 == 0 || end == 20_000);
        try (ParquetDecode.Chunk pages = source.readEncoded(chunk, i32, a)) {
          assertEquals(whole, pages != null, "chunk " + chunk + " rows " + start + ".." + end);
        }
      }
    }
    // row group 0's strings take a dictionary, the others' are PLAIN: the chunk of both goes to Arrow's reader
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(snappy, a, 8192)) {
      int mixed = source.names().indexOf("mixed");
      try (ParquetDecode.Chunk first = source.readEncoded(0, mixed, a); ParquetDecode.Chunk second = source.readEncoded(1, mixed, a)) {
        assertNull(first, "dictionary and PLAIN pages in one chunk");
        assertTrue(second != null, "PLAIN pages only");
      }
    }
  }

  @Test
  void aDamagedPageOrPageHeaderNamesTheFileRowGroupAndColumn(@TempDir Path dir) throws Exception {
    Path file = write(dir, "uncompressed.parquet", "uncompressed");
    ParquetFooter.Stored stored;
    List<String> names;
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(file, a, 4096)) {
      names = source.names();
      stored = ParquetFooter.read(file, names, source.types()).get(1).stored().get(names.indexOf("small"));
    }
    byte[] bytes = Files.readAllBytes(file);
    // the values of row group 1's first page after its header and levels: an index width past 32
    Path badPage = dir.resolve("bad-page.parquet");
    byte[] page = bytes.clone();
    java.util.Arrays.fill(page, (int) stored.start() + 40, (int) (stored.start() + stored.bytes()), (byte) 0x7f);
    Files.write(badPage, page);
    Path badHeader = dir.resolve("bad-header.parquet");
    byte[] header = bytes.clone();
    java.util.Arrays.fill(header, (int) stored.start(), (int) stored.start() + 8, (byte) 0xff);
    Files.write(badHeader, header);
    try (RootAllocator a = new RootAllocator(); ParquetSource pageSource = ParquetSource.open(badPage, a, 4096);
        ParquetSource headerSource = ParquetSource.open(badHeader, a, 4096)) {
      int small = names.indexOf("small");
      UserException e = assertThrows(UserException.class, () -> {
        try (ParquetDecode.Chunk pages = pageSource.readEncoded(1, small, a)) {
          ParquetDecode.decodeOnHost(pages, "small", a).close();
        }
      });
      assertTrue(e.getMessage().startsWith(badPage + " row group 1 column small: "), e.getMessage());
      UserException h = assertThrows(UserException.class, () -> headerSource.readEncoded(1, small, a));
      assertTrue(h.getMessage().startsWith(badHeader + " row group 1 column small: "), h.getMessage());
      assertNull(pageSource.readEncoded(1, names.indexOf("bool"), a), "booleans stay with Arrow's reader");
      assertEquals(0, a.getAllocatedMemory());
    }
  }
}
