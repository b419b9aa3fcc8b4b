package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TPC-H written as Parquet over several calls: only the tables named, a table whose file is there
 * kept as it is, a file cut short by an earlier call (its {@code .part}) written again, and a
 * misspelt table refused before anything is written.
 */
class TpchFilesTest {
  @Test
  void writesTheNamedTablesAndKeepsThoseWritten(@TempDir Path dir) throws Exception {
    TpchFiles.write(0.001, dir, Set.of("nation", "region"), log());
    assertTrue(Files.exists(dir.resolve("nation.parquet")));
    assertTrue(Files.exists(dir.resolve("region.parquet")));
    assertFalse(Files.exists(dir.resolve("supplier.parquet")));
    FileTime written = Files.getLastModifiedTime(dir.resolve("nation.parquet"));
    // a call cut short while writing supplier left its .part
    Files.writeString(dir.resolve("supplier.parquet.part"), "cut short");
    ByteArrayOutputStream said = new ByteArrayOutputStream();
    TpchFiles.write(0.001, dir, Set.of("nation", "supplier"), new PrintStream(said, true, StandardCharsets.UTF_8));
    assertEquals(written, Files.getLastModifiedTime(dir.resolve("nation.parquet")));
    assertTrue(said.toString(StandardCharsets.UTF_8).contains("nation.parquet: kept"), said.toString(StandardCharsets.UTF_8));
    assertFalse(Files.exists(dir.resolve("supplier.parquet.part")));
    assertEquals(25, rows(dir.resolve("nation.parquet")));
    assertEquals(10, rows(dir.resolve("supplier.parquet")));
  }

  @Test
  void anUnknownTableIsRefusedBeforeAnythingIsWritten(@TempDir Path dir) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TpchFiles.write(0.001, dir, Set.of("nation", "lineitems"), log()));
    assertTrue(e.getMessage().contains("[lineitems]"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("nation.parquet")));
  }

  private static PrintStream log() {
    return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
  }

  /** The rows of a Parquet file, as DuckDB reads it. */
  private static long rows(Path file) throws Exception {
    try (var c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet r = st.executeQuery("SELECT COUNT(*) FROM read_parquet('" + file.toString().replace("'", "''") + "')")) {
      r.next();
      return r.getLong(1);
    }
  }
}
