package dev.gpudf.sql.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The append log under crashes: a log cut at every byte of its last batch (a write that a crash
 * stopped) gives back exactly the whole batches before it, and once repaired takes new batches
 * after them; a log cut inside its schema is no log.
 */
class AppendLogTest {
  @Test
  void aLogCutAnywhereKeepsItsWholeBatches(@TempDir Path dir) throws Exception {
    try (RootAllocator a = new RootAllocator()) {
      Path log = AppendLog.path(dir, "t", "1f");
      List<Long> sizes = new ArrayList<>();
      for (int b = 0; b < 3; b++) {
        try (VectorSchemaRoot rows = rows(a, b * 10L, 1 + b)) {
          AppendLog.append(log, rows);
        }
        sizes.add(Files.size(log));
      }
      byte[] whole = Files.readAllBytes(log);
      for (long cut = 0; cut <= whole.length; cut++) {
        Path c = dir.resolve(".c" + cut + ".1.log");
        Files.write(c, java.util.Arrays.copyOf(whole, (int) cut));
        long length = cut;
        int expected = (int) sizes.stream().filter(s -> s <= length).count();
        List<Long> seen = new ArrayList<>();
        assertEquals(expected, AppendLog.replay(c, a, r -> seen.add(((BigIntVector) r.getVector(0)).get(0))), "cut at " + cut);
        assertEquals(List.of(0L, 10L, 20L).subList(0, expected), seen, "cut at " + cut);
        AppendLog.repair(c, a);
        if (cut < schemaEnd(whole)) {
          // no whole schema: the repair removes the log
          assertFalse(Files.exists(c), "cut at " + cut);
          continue;
        }
        assertTrue(Files.exists(c), "a log with a whole schema stays, cut at " + cut);
        try (VectorSchemaRoot more = rows(a, 99, 1)) {
          AppendLog.append(c, more);
        }
        List<Long> after = new ArrayList<>();
        assertEquals(expected + 1, AppendLog.replay(c, a, r -> after.add(((BigIntVector) r.getVector(0)).get(0))), "cut at " + cut);
        assertEquals(99L, after.get(after.size() - 1));
        Files.deleteIfExists(c);
      }
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  /** Where the log's schema message ends: its continuation marker, length and metadata (a schema has no body). */
  private static long schemaEnd(byte[] log) {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(log).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    return 8 + b.getInt(4);
  }

  private static VectorSchemaRoot rows(RootAllocator a, long first, int n) {
    BigIntVector v = new BigIntVector("id", a);
    v.allocateNew(n);
    for (int i = 0; i < n; i++) {
      v.set(i, first + i);
    }
    v.setValueCount(n);
    VectorSchemaRoot root = VectorSchemaRoot.of(v);
    root.setRowCount(n);
    return root;
  }
}
