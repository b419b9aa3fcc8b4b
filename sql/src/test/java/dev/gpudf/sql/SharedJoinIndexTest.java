package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Joins of a table split into chunks to one shared right side, which the CPU backend indexes
 * once for all the chunks ({@link QueryContext#joinIndex}): every kind of join, with and without a
 * residual condition, with NULL keys on both sides, answers as over the unsplit table.
 */
class SharedJoinIndexTest {
  @Test
  void everyKindOfJoinToASharedSideAnswersAsUnsplit() {
    try (RootAllocator a = new RootAllocator(); GpuSession s = GpuSession.cpu(a)) {
      s.catalog().maxChunkRows(1_000);
      // split: 10 parts of 1,000 rows appended, a chunk each; whole: the same rows as one chunk
      for (int part = 0; part < 10; part++) {
        try (VectorSchemaRoot rows = rows(a, part * 1_000, 1_000)) {
          if (part == 0) {
            s.catalog().register("split", rows);
          } else {
            s.catalog().append("split", rows);
          }
        }
      }
      s.update("CREATE TABLE whole AS SELECT * FROM split");
      try (VectorSchemaRoot d = dimension(a)) {
        s.catalog().register("d", d);
      }
      assertEquals(10, s.catalog().shape("split").chunks());
      assertEquals(1, s.catalog().shape("whole").chunks());
      List<String> joins = List.of(
          "SELECT COUNT(*), SUM(t.k), SUM(d.w) FROM $t t JOIN d ON t.j = d.id",
          "SELECT COUNT(*), SUM(t.k), COUNT(d.w) FROM $t t LEFT JOIN d ON t.j = d.id",
          "SELECT COUNT(*), SUM(t.k) FROM $t t WHERE t.j IN (SELECT id FROM d)",
          "SELECT COUNT(*), SUM(t.k) FROM $t t WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.id = t.j)",
          "SELECT COUNT(*), SUM(t.k), SUM(d.w) FROM $t t JOIN d ON t.j = d.id AND t.w > d.w",
          "SELECT COUNT(*), SUM(t.k), COUNT(d.w) FROM $t t LEFT JOIN d ON t.j = d.id AND t.w <> d.w",
          "SELECT d.id, COUNT(*) FROM $t t JOIN d ON t.j = d.id AND t.w = d.w GROUP BY d.id ORDER BY d.id");
      for (String q : joins) {
        String split = q.replace("$t", "split");
        assertTrue(s.explain(split).contains("GpuUnion"), split + " runs per chunk");
        assertEquals(rows(s, q.replace("$t", "whole")), rows(s, split), split);
      }
    }
  }

  /** Rows {@code from} .. {@code from + n - 1}: k = x, j = x % 17 (NULL where x % 11 = 0), w = x % 5. */
  private static VectorSchemaRoot rows(RootAllocator a, int from, int n) {
    BigIntVector k = new BigIntVector("k", a);
    BigIntVector j = new BigIntVector("j", a);
    BigIntVector w = new BigIntVector("w", a);
    for (BigIntVector v : List.of(k, j, w)) {
      v.allocateNew(n);
    }
    for (int i = 0; i < n; i++) {
      long x = from + i;
      k.set(i, x);
      if (x % 11 == 0) {
        j.setNull(i);
      } else {
        j.set(i, x % 17);
      }
      w.set(i, x % 5);
    }
    VectorSchemaRoot root = VectorSchemaRoot.of(k, j, w);
    root.setRowCount(n);
    return root;
  }

  /** 13 rows: id = y (NULL for y = 3), w = y % 4. */
  private static VectorSchemaRoot dimension(RootAllocator a) {
    BigIntVector id = new BigIntVector("id", a);
    BigIntVector w = new BigIntVector("w", a);
    id.allocateNew(13);
    w.allocateNew(13);
    for (int y = 0; y < 13; y++) {
      if (y == 3) {
        id.setNull(y);
      } else {
        id.set(y, y);
      }
      w.set(y, y % 4);
    }
    VectorSchemaRoot root = VectorSchemaRoot.of(id, w);
    root.setRowCount(13);
    return root;
  }

  private static List<List<Object>> rows(GpuSession s, String q) {
    try (VectorSchemaRoot r = s.query(q)) {
      List<List<Object>> out = new java.util.ArrayList<>();
      for (int i = 0; i < r.getRowCount(); i++) {
        List<Object> row = new java.util.ArrayList<>();
        for (int c = 0; c < r.getFieldVectors().size(); c++) {
          Object v = r.getVector(c).getObject(i);
          row.add(v == null ? null : v.toString());
        }
        out.add(row);
      }
      return out;
    }
  }
}
