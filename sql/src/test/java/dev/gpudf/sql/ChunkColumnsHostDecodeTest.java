package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.formats.ParquetFooter;
import dev.gpudf.sql.files.ParquetSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CPU catalog's reads of a Parquet file's chunks ({@link ChunkColumns#read} with no GPU): the
 * columns gpudf's decoder takes are decoded by it on the host, the others read by Arrow's reader,
 * and the chunk's root holds them all in the order asked, each equal to what Arrow's reader gives
 * for it. A damaged page fails the read naming the file, and leaves nothing allocated.
 */
class ChunkColumnsHostDecodeTest {
  private static final String SELECT = "SELECT"
      + " CASE WHEN i % 7 = 3 THEN NULL ELSE CAST(i * 2654435761 % 1000003 AS INTEGER) END AS i32,"
      + " CAST(i AS BIGINT) * 1000000007 - 5000000000000 AS i64,"
      + " CASE WHEN i % 5 = 0 THEN NULL ELSE CAST((i - 10000) * 12345.67 AS DECIMAL(15, 2)) END AS dec15,"
      + " CASE WHEN i % 9 = 0 THEN NULL ELSE ['MAIL', '', 'Grüße, 東京', 'DELIVER IN PERSON'][i % 4 + 1] END AS mode,"
      + " 'é' || i AS str, i % 2 = 0 AS bool, CAST(i AS DECIMAL(38, 2)) AS dec38"
      + " FROM range(20000) r(i)";
  // the columns gpudf's decoder takes (booleans and 38-digit decimals are Arrow's)
  private static final int DECODED = 5;

  private static Path write(Path dir, String name) throws Exception {
    Path file = dir.resolve(name);
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      st.execute("COPY (" + SELECT + ") TO '" + file + "' (FORMAT parquet, ROW_GROUP_SIZE 4096, COMPRESSION snappy)");
    }
    return file;
  }

  private static void assertSameRows(VectorSchemaRoot want, VectorSchemaRoot got, String what) {
    assertEquals(want.getRowCount(), got.getRowCount(), what);
    assertEquals(want.getFieldVectors().size(), got.getFieldVectors().size(), what);
    for (int c = 0; c < want.getFieldVectors().size(); c++) {
      assertEquals(want.getVector(c).getName(), got.getVector(c).getName(), what);
      for (int r = 0; r < want.getRowCount(); r++) {
        assertEquals(want.getVector(c).getObject(r), got.getVector(c).getObject(r),
            what + " column " + want.getVector(c).getName() + " row " + r);
      }
    }
  }

  /**
   * For each column of {@code got} held as codes, that its codes are canonical: a chunk of two row
   * groups has two dictionaries that hold the same strings, and a string must have one code, or a
   * grouping on the codes splits its group. The columns held as codes.
   */
  private static int canonical(dev.gpudf.columnar.HostTable got, VectorSchemaRoot rows, String what) {
    int encoded = 0;
    for (int c = 0; c < got.columnCount(); c++) {
      dev.gpudf.columnar.StringCodes codes = got.column(c).codes();
      if (codes == null) {
        continue;
      }
      encoded++;
      java.util.Map<Object, Integer> codeOf = new java.util.HashMap<>();
      for (int r = 0; r < got.rowCount(); r++) {
        int code = org.apache.arrow.memory.util.MemoryUtil.getInt(codes.codesAddress() + 4L * r);
        Object s = rows.getVector(c).getObject(r);
        Integer had = codeOf.putIfAbsent(s == null ? "NULL" : s.toString(), code);
        assertEquals(had == null ? code : had, code, what + " column " + got.names().get(c) + " row " + r + " (" + s + ")");
      }
    }
    return encoded;
  }

  @Test
  void chunksDecodeOnTheHostAsArrowReadsThem(@TempDir Path dir) throws Exception {
    Path file = write(dir, "t.parquet");
    // every column, last first, so that decoded and Arrow-read columns interleave out of file order
    int[] columns = {6, 5, 4, 3, 2, 1, 0};
    try (RootAllocator a = new RootAllocator()) {
      // chunks of two row groups (the last of one), then chunks of 5,000 rows that cut row groups
      for (int chunkRows : new int[] {8192, 5000}) {
        try (ParquetSource source = ParquetSource.open(file, a, chunkRows)) {
          int decoded = 0;
          int encoded = 0;
          int whole = 0;
          long start = 0;
          for (int chunk = 0; chunk < source.chunkRows().size(); chunk++) {
            String what = chunkRows + "-row chunk " + chunk;
            long end = start + source.chunkRows().get(chunk);
            // only a chunk of whole row groups (4,096 rows each, the last 3,616) goes to the decoder
            whole += start % 4096 == 0 && (end % 4096 == 0 || end == 20_000) ? 1 : 0;
            start = end;
            try (ChunkColumns read = ChunkColumns.read(source, chunk, columns, a, null);
                VectorSchemaRoot want = source.read(chunk, columns, a);
                dev.gpudf.columnar.HostTable got = read.table(null); VectorSchemaRoot rows = got.toArrow(a)) {
              assertSameRows(want, rows, what);
              decoded += read.decodedOnHost();
              encoded += canonical(got, rows, what);
            }
            // -Dgpudf.files.hostDecode=false: every column by the source's reader, the same rows
            try (ChunkColumns read = ChunkColumns.read(source, chunk, columns, a, null, false);
                VectorSchemaRoot want = source.read(chunk, columns, a);
                dev.gpudf.columnar.HostTable got = read.table(null); VectorSchemaRoot rows = got.toArrow(a)) {
              assertSameRows(want, rows, what + ", the source's reader alone");
              assertEquals(0, read.decodedOnHost(), what);
            }
            // COUNT(*): no column, the chunk's rows
            try (ChunkColumns none = ChunkColumns.read(source, chunk, new int[0], a, null);
                dev.gpudf.columnar.HostTable got = none.table(null)) {
              assertEquals(source.chunkRows().get(chunk), got.rowCount(), what);
            }
          }
          assertTrue(whole > 0, "some chunk is whole row groups");
          assertTrue(encoded > 0, "some column is held as codes");
          assertEquals(DECODED * whole, decoded, chunkRows + "-row chunks: every column the decoder takes, in every whole chunk");
        }
      }
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  @Test
  void aDamagedPageFailsTheReadNamingTheFileAndLeavesNothing(@TempDir Path dir) throws Exception {
    Path file = write(dir, "t.parquet");
    List<String> names;
    ParquetFooter.Stored stored;
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(file, a, 8192)) {
      names = source.names();
      stored = ParquetFooter.read(file, names, source.types()).get(1).stored().get(names.indexOf("i64"));
    }
    byte[] bytes = Files.readAllBytes(file);
    // row group 1's i64 values past their page header: Snappy data that is not what its header says
    java.util.Arrays.fill(bytes, (int) stored.start() + 40, (int) (stored.start() + stored.bytes()), (byte) 0x7f);
    Path bad = dir.resolve("bad.parquet");
    Files.write(bad, bytes);
    try (RootAllocator a = new RootAllocator(); ParquetSource source = ParquetSource.open(bad, a, 8192)) {
      int[] all = {0, 1, 2, 3, 4, 5, 6};
      UserException e = assertThrows(UserException.class, () -> ChunkColumns.read(source, 0, all, a, null).close());
      assertTrue(e.getMessage().startsWith(bad + " row group 1 column i64: "), e.getMessage());
      // the chunk of row groups 2 and 3 is whole
      try (ChunkColumns read = ChunkColumns.read(source, 1, all, a, null)) {
        assertEquals(DECODED, read.decodedOnHost());
      }
      assertEquals(0, a.getAllocatedMemory());
    }
  }
}
