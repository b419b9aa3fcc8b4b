package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.DictionaryColumn;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A directory of Arrow IPC and CSV files as tables, queried with SQL. */
class FileTablesTest {
  @Test
  void arrowAndCsvFilesBecomeTables(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("city.csv"), String.join("\n",
        "id,name,price,founded,population",
        "1,\"Zürich, ZH\",12.50,1218-01-01,421878",
        "2,München,7.25,1158-06-14,",
        "3,\"say \"\"hi\"\"\",0.10,1900-12-31,3", ""), StandardCharsets.UTF_8);
    try (RootAllocator a = new RootAllocator()) {
      IntVector v = new IntVector("id", a);
      v.allocateNew(2500);
      for (int i = 0; i < 2500; i++) {
        v.set(i, i % 4);
      }
      v.setValueCount(2500);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v));
          FileChannel ch = FileChannel.open(dir.resolve("visits.arrow"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
        root.setRowCount(1000);
        w.start();
        w.writeBatch();
        root.setRowCount(2500);
        w.writeBatch();
        w.end();
      }
      try (GpuSession s = GpuSession.cpu(a)) {
        assertEquals(List.of("city", "visits"), FileTables.loadDirectory(s.catalog(), dir, a));
        try (VectorSchemaRoot r = s.query("SELECT c.name, c.price, c.founded, c.population, COUNT(*) AS n FROM city c "
            + "JOIN visits v ON c.id = v.id GROUP BY c.name, c.price, c.founded, c.population ORDER BY c.name")) {
          assertEquals(3, r.getRowCount());
          // 3500 rows of ids 0..3 over two batches: id 1 appears 250 + 625 times
          assertEquals("München", r.getVector(0).getObject(0).toString());
          assertEquals("Zürich, ZH", r.getVector(0).getObject(1).toString());
          assertEquals("say \"hi\"", r.getVector(0).getObject(2).toString());
          assertEquals(0, new BigDecimal("12.50").compareTo((BigDecimal) r.getVector(1).getObject(1)));
          assertEquals(null, r.getVector(3).getObject(0));
          assertEquals(875L, r.getVector(4).getObject(1));
        }
      }
      Files.writeString(dir.resolve("bad.csv"), "a,b\n\"open,1\n");
      try (GpuSession s = GpuSession.cpu(a)) {
        assertThrows(UserException.class, () -> FileTables.loadDirectory(s.catalog(), dir, a));
      }
    }
  }

  /** A record with more or fewer fields than the header is refused by its number; blank lines are skipped. */
  @Test
  void raggedCsvRecordsAreRefused(@TempDir Path dir) throws IOException {
    try (RootAllocator a = new RootAllocator()) {
      Files.writeString(dir.resolve("ok.csv"), "a,b\n1,x\n\n2,\"y,z\"\n\n");
      try (VectorSchemaRoot r = FileTables.read(dir.resolve("ok.csv"), "csv", a)) {
        assertEquals(2, r.getRowCount());
        assertEquals("y,z", r.getVector(1).getObject(1).toString());
      }
      for (String ragged : List.of("a,b\n1,x\n2\n", "a,b\n1,x\n2,y,extra\n")) {
        Files.writeString(dir.resolve("ragged.csv"), ragged);
        UserException e = assertThrows(UserException.class, () -> FileTables.read(dir.resolve("ragged.csv"), "csv", a));
        assertTrue(e.getMessage().endsWith("ragged.csv: record 3 has " + (ragged.contains("extra") ? 3 : 1)
            + " fields where the header has 2"), e.getMessage());
      }
    }
  }

  /** Header cells that declare a type: the column has it, and a value that is not one fails with its row. */
  @Test
  void csvHeadersDeclareTypes(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("prices.csv"), String.join("\n",
        "sku:INTEGER,\"price:DECIMAL(6,2)\",seen:TIMESTAMP,ok:BOOLEAN,note",
        "7,1.005,2024-02-29 10:30:00,true,01",
        "8,,2024-03-01T00:00:01.5,FALSE,x", ""), StandardCharsets.UTF_8);
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      FileTables.loadDirectory(s.catalog(), dir, a);
      try (VectorSchemaRoot r = s.query("SELECT sku + 1, price, EXTRACT(DAY FROM seen), ok, note FROM prices ORDER BY sku")) {
        assertEquals(List.of("INTEGER", "DECIMAL(6, 2)"), List.of(
            s.resultType("SELECT sku FROM prices").getFieldList().get(0).getType().getSqlTypeName().getName(),
            s.resultType("SELECT price FROM prices").getFieldList().get(0).getType().getFullTypeString()
                .replace(" NOT NULL", "").replace("DECIMAL(6, 2)", "DECIMAL(6, 2)")));
        assertEquals(8, ((Number) r.getVector(0).getObject(0)).intValue());
        assertEquals(new BigDecimal("1.01"), r.getVector(1).getObject(0));
        assertEquals(null, r.getVector(1).getObject(1));
        assertEquals(29L, ((Number) r.getVector(2).getObject(0)).longValue());
        assertEquals(false, r.getVector(3).getObject(1));
        assertEquals("01", r.getVector(4).getObject(0).toString());
      }
    }
    Files.writeString(dir.resolve("prices.csv"), "sku:INTEGER,\"price:DECIMAL(4,2)\"\n1,2.5\n2,123.4\n");
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      UserException e = assertThrows(UserException.class, () -> FileTables.loadDirectory(s.catalog(), dir, a));
      assertTrue(e.getMessage().contains("row 3 column 'price': '123.4' is not a DECIMAL(4, 2)"), e.getMessage());
    }
    Files.writeString(dir.resolve("prices.csv"), "sku:NUMBERISH\n1\n");
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      UserException e = assertThrows(UserException.class, () -> FileTables.loadDirectory(s.catalog(), dir, a));
      assertTrue(e.getMessage().contains("NUMBERISH"), e.getMessage());
    }
  }

  @Test
  void dictionaryEncodedColumnsOfAnArrowFileAreReadAsTheirValues(@TempDir Path dir) throws IOException {
    int[] codes = {0, 1, 2, 0, 1, -1, 0};
    try (RootAllocator a = new RootAllocator();
        DictionaryColumn status = DictionaryColumn.of(a, "status", 1, new String[] {"ok", "délai", "late"}, codes)) {
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(status.codes()));
          FileChannel out = FileChannel.open(dir.resolve("orders.arrow"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          ArrowFileWriter writer = new ArrowFileWriter(root, status.provider(), out)) {
        writer.start();
        writer.writeBatch();
        writer.writeBatch();
        writer.end();
      }
    }
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      FileTables.loadDirectory(s.catalog(), dir, a);
      try (VectorSchemaRoot r = s.query("SELECT status, COUNT(*) FROM orders GROUP BY status ORDER BY status")) {
        // two batches of ok, délai, late, ok, délai, NULL, ok: values, not codes 0..2
        assertEquals("status\tcount\ndélai\t4\nlate\t2\nok\t6\nnull\t2\n", r.contentToTSVString());
      }
    }
  }
}
