package dev.gpudf.sql.files;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.VectorBatchAppender;
import org.junit.jupiter.api.Test;

/**
 * {@link ColumnAppend} gathers batches into the same columns as Arrow's appender, row for row,
 * for every gpudf type (non-ASCII strings, NULLs, booleans through the fallback), over batch
 * sizes that leave the chunk's rows at and off byte boundaries (0, 1, 7, 8, 31, 32, 33, and
 * several thousand rows), into columns sized up front and into columns that must grow.
 */
class ColumnAppendTest {
  @Test
  void batchesGatherAsArrowsAppenderGathersThem() {
    List<List<Integer>> runs = List.of(List.of(8, 32, 4096), List.of(1, 7, 8, 31, 32, 33, 0, 5000), List.of(33, 33, 33),
        List.of(0), List.of(3000, 1, 64));
    long seed = 0;
    for (List<Integer> run : runs) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
        for (int presized : new int[] {0, run.stream().mapToInt(Integer::intValue).sum()}) {
          try (RootAllocator a = new RootAllocator()) {
            VectorSchemaRoot mine = null;
            VectorSchemaRoot arrows = null;
            try {
              int rows = 0;
              for (int size : run) {
                try (VectorSchemaRoot batch = TestTables.allTypes(a, size, nulls, ++seed)) {
                  if (mine == null) {
                    mine = VectorSchemaRoot.create(batch.getSchema(), a);
                    arrows = VectorSchemaRoot.create(batch.getSchema(), a);
                    for (FieldVector v : mine.getFieldVectors()) {
                      v.setInitialCapacity(Math.max(presized, 1));
                    }
                    mine.allocateNew();
                    arrows.allocateNew();
                  }
                  for (int c = 0; c < batch.getFieldVectors().size(); c++) {
                    ColumnAppend.append(mine.getVector(c), rows, batch.getVector(c));
                    VectorBatchAppender.batchAppend(arrows.getVector(c), batch.getVector(c));
                  }
                  rows += size;
                  mine.setRowCount(rows);
                  arrows.setRowCount(rows);
                }
              }
              String what = run + ", " + nulls + ", sized for " + presized;
              for (int c = 0; c < mine.getFieldVectors().size(); c++) {
                FieldVector m = mine.getVector(c);
                FieldVector w = arrows.getVector(c);
                assertEquals(w.getNullCount(), m.getNullCount(), what + ", " + m.getName());
                for (int r = 0; r < rows; r++) {
                  assertEquals(w.getObject(r), m.getObject(r), what + ", " + m.getName() + " row " + r);
                }
              }
            } finally {
              if (mine != null) {
                mine.close();
                arrows.close();
              }
            }
          }
        }
      }
    }
  }

  /**
   * A batch's string offsets need not start at 0 (an Arrow slice, or a reader's view into a larger
   * buffer): only its own bytes are copied, at the end of the chunk's, after an empty chunk and
   * after rows that end off a byte boundary; validity bits past its rows are not copied.
   */
  @Test
  void stringsWhoseOffsetsStartPastZeroAreShifted() {
    try (RootAllocator a = new RootAllocator(); org.apache.arrow.vector.VarCharVector batch =
        new org.apache.arrow.vector.VarCharVector("s", a); org.apache.arrow.vector.VarCharVector chunk =
        new org.apache.arrow.vector.VarCharVector("s", a)) {
      batch.allocateNew(64, 4);
      // bytes "skip" then "å" and "xyz": three rows whose offsets are 4, 6, 6, 9
      byte[] bytes = "skipåxyz".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      org.apache.arrow.memory.util.MemoryUtil.copyToMemory(bytes, 0, batch.getDataBuffer().memoryAddress(), bytes.length);
      int[] offsets = {4, 6, 6, 9};
      for (int i = 0; i < offsets.length; i++) {
        batch.getOffsetBuffer().setInt(4L * i, offsets[i]);
      }
      org.apache.arrow.vector.BitVectorHelper.setBit(batch.getValidityBuffer(), 0);
      org.apache.arrow.vector.BitVectorHelper.setBit(batch.getValidityBuffer(), 2);
      batch.setLastSet(2);
      batch.setValueCount(3);
      assertEquals(List.of("å", "xyz"), List.of(batch.getObject(0).toString(), batch.getObject(2).toString()));
      // a bit past the batch's rows, which a reader may leave set: it must not become a row's
      org.apache.arrow.vector.BitVectorHelper.setBit(batch.getValidityBuffer(), 4);
      chunk.allocateNew();
      for (int at : new int[] {0, 3, 6}) {
        ColumnAppend.append(chunk, at, batch);
        chunk.setValueCount(at + 3);
      }
      chunk.setSafe(9, "end".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      chunk.setValueCount(10);
      List<String> got = new java.util.ArrayList<>();
      for (int r = 0; r < 10; r++) {
        got.add(chunk.isNull(r) ? null : chunk.getObject(r).toString());
      }
      assertEquals(java.util.Arrays.asList("å", null, "xyz", "å", null, "xyz", "å", null, "xyz", "end"), got);
    }
  }
}
