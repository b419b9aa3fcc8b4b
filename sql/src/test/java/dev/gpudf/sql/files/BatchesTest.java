package dev.gpudf.sql.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.VectorBatchAppender;
import org.junit.jupiter.api.Test;

/**
 * {@link Batches} gathers a reader's batches in groups checked and copied on several threads:
 * chunk by chunk, the rows come out as Arrow's own appender gathers them, over more batches than a
 * group holds and batch sizes on and off byte boundaries; a damaged batch is named by its number
 * wherever its group falls; a chunk of one batch takes the batch's buffers only where it may.
 */
class BatchesTest {
  /** Serves prepared batches, each loaded into its root by reference (as a file reader's buffers are). */
  private static final class ListReader extends ArrowReader {
    private final List<VectorSchemaRoot> batches;
    private int next;

    ListReader(BufferAllocator allocator, List<VectorSchemaRoot> batches) {
      super(allocator);
      this.batches = batches;
    }

    @Override
    public boolean loadNextBatch() {
      if (next == batches.size()) {
        return false;
      }
      try (ArrowRecordBatch batch = new VectorUnloader(batches.get(next++)).getRecordBatch()) {
        loadRecordBatch(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return batches.get(0).getSchema();
    }
  }

  @Test
  void chunksHoldAtMostTheirRowsAndOneBatchWhereABatchHoldsMore() {
    assertGroups(List.of(), 4, List.of(0), List.of(0, 0));
    assertGroups(List.of(5), 3, List.of(5), List.of(0, 1));
    assertGroups(List.of(2, 2, 2), 4, List.of(4, 2), List.of(0, 2, 3));
    assertGroups(List.of(2, 3), 4, List.of(2, 3), List.of(0, 1, 2));
    assertGroups(List.of(4, 4), 4, List.of(4, 4), List.of(0, 1, 2));
    assertGroups(List.of(0, 0, 1, 9, 1), 1, List.of(1, 9, 1), List.of(0, 3, 4, 5));
  }

  private static void assertGroups(List<Integer> batches, int chunkRows, List<Integer> rows, List<Integer> first) {
    List<Integer> gotRows = new ArrayList<>();
    List<Integer> gotFirst = new ArrayList<>();
    ChunkSource.group(batches, chunkRows, gotRows, gotFirst);
    assertEquals(rows, gotRows, batches + " in chunks of " + chunkRows);
    assertEquals(first, gotFirst, batches + " in chunks of " + chunkRows);
  }

  @Test
  void chunksGatherAsArrowsAppenderDoes() throws Exception {
    int[] sizes = new int[3 * Batches.GROUP + 2];
    int[] pattern = {0, 1, 7, 8, 31, 32, 33, 1000};
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = pattern[i % pattern.length];
    }
    for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3))) {
      // whole, in chunks of one batch, of a group and one, and of a group and a half
      for (int perChunk : new int[] {sizes.length, 1, Batches.GROUP + 1, Batches.GROUP * 3 / 2}) {
        // columns sized by the gather, sized up front for each chunk's rows, and for half of them
        for (int sizing = 0; sizing < 3; sizing++) {
          gather(sizes, nulls, perChunk, sizing);
        }
      }
    }
  }

  private static void gather(int[] sizes, Nulls nulls, int perChunk, int sizing) throws Exception {
        try (RootAllocator a = new RootAllocator()) {
          List<VectorSchemaRoot> batches = new ArrayList<>();
          try {
            for (int i = 0; i < sizes.length; i++) {
              batches.add(TestTables.allTypes(a, sizes[i], nulls, 100 + i));
            }
            try (ListReader reader = new ListReader(a, batches)) {
              for (int from = 0; from < sizes.length; from += perChunk) {
                int to = Math.min(sizes.length, from + perChunk);
                int rows = java.util.Arrays.stream(sizes, from, to).sum();
                int expectedRows = sizing == 0 ? 0 : sizing == 1 ? rows : rows / 2;
                dirty(a);
                try (VectorSchemaRoot expected = appended(a, batches.subList(from, to));
                    VectorSchemaRoot got = Batches.append(reader, a, perChunk, expectedRows, "test")) {
                  TestTables.assertSameData(expected, got);
                }
              }
            }
          } finally {
            batches.forEach(VectorSchemaRoot::close);
          }
        }
  }

  /**
   * Leaves ones in memory the allocator will hand out again (its pool keeps freed memory), so that
   * a gather that relied on memory it did not clear would show it.
   */
  private static void dirty(BufferAllocator a) {
    for (long bytes = 1 << 10; bytes <= 1 << 22; bytes *= 4) {
      try (org.apache.arrow.memory.ArrowBuf b = a.buffer(bytes)) {
        b.setOne(0, b.capacity());
      }
    }
  }

  private static VectorSchemaRoot appended(BufferAllocator a, List<VectorSchemaRoot> batches) {
    VectorSchemaRoot out = VectorSchemaRoot.create(batches.get(0).getSchema(), a);
    out.allocateNew();
    int rows = 0;
    for (VectorSchemaRoot b : batches) {
      for (int c = 0; c < b.getFieldVectors().size(); c++) {
        VectorBatchAppender.batchAppend(out.getVector(c), b.getVector(c));
      }
      rows += b.getRowCount();
    }
    out.setRowCount(rows);
    return out;
  }

  @Test
  void aDamagedBatchIsNamedByItsNumberInAnyGroup() throws Exception {
    int damaged = Batches.GROUP + 2;
    try (RootAllocator a = new RootAllocator()) {
      List<VectorSchemaRoot> batches = new ArrayList<>();
      try {
        for (int i = 0; i < 2 * Batches.GROUP; i++) {
          VarCharVector s = new VarCharVector("s", a);
          s.allocateNew(16, 2);
          s.setSafe(0, "ab".getBytes(java.nio.charset.StandardCharsets.UTF_8));
          s.setSafe(1, "c".getBytes(java.nio.charset.StandardCharsets.UTF_8));
          s.setValueCount(2);
          if (i == damaged - 1) {
            // offsets run backwards: 0, 2, 1
            s.getOffsetBuffer().setInt(8, 1);
          }
          VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(s));
          root.setRowCount(2);
          batches.add(root);
        }
        try (ListReader reader = new ListReader(a, batches)) {
          UserException e = assertThrows(UserException.class, () -> Batches.append(reader, a, Long.MAX_VALUE, "t.arrow"));
          assertTrue(e.getMessage().contains("t.arrow, record batch " + damaged + ":"), e.getMessage());
          assertTrue(e.getMessage().contains("backwards"), e.getMessage());
        }
      } finally {
        batches.forEach(VectorSchemaRoot::close);
      }
    }
  }

  /**
   * A chunk of one batch keeps the batch's buffers when they are the target allocator's and its
   * strings start at offset 0; into another root allocator (pinned memory, for one), or from a
   * batch whose strings start further into their bytes (a reader's view into a larger buffer),
   * it is copied, with the same rows, its offsets then starting at 0.
   */
  @Test
  void aChunkOfOneBatchTakesItsBuffersOnlyWhereItMay() throws Exception {
    try (RootAllocator a = new RootAllocator(); RootAllocator other = new RootAllocator();
        VectorSchemaRoot whole = TestTables.allTypes(a, 100, Nulls.every(4), 7);
        VectorSchemaRoot inner = stringsStartingPastZero(a)) {
      assertEquals(List.of(true, true), handedOver(a, a, whole));
      assertEquals(List.of(false, false), handedOver(a, other, whole));
      assertEquals(List.of(false, false), handedOver(a, a, inner), "strings that start past 0");
    }
  }

  /** Columns i64 (1, 2, 3) and str ("å", NULL, "xyz") whose offsets are 4, 6, 6, 9 into bytes "skipåxyz". */
  private static VectorSchemaRoot stringsStartingPastZero(BufferAllocator a) {
    org.apache.arrow.vector.BigIntVector i = new org.apache.arrow.vector.BigIntVector("i64", a);
    VarCharVector s = new VarCharVector("str", a);
    i.allocateNew(3);
    for (int r = 0; r < 3; r++) {
      i.set(r, r + 1);
    }
    i.setValueCount(3);
    s.allocateNew(64, 4);
    byte[] bytes = "skipåxyz".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    org.apache.arrow.memory.util.MemoryUtil.copyToMemory(bytes, 0, s.getDataBuffer().memoryAddress(), bytes.length);
    int[] offsets = {4, 6, 6, 9};
    for (int r = 0; r < offsets.length; r++) {
      s.getOffsetBuffer().setInt(4L * r, offsets[r]);
    }
    org.apache.arrow.vector.BitVectorHelper.setBit(s.getValidityBuffer(), 0);
    org.apache.arrow.vector.BitVectorHelper.setBit(s.getValidityBuffer(), 2);
    s.setLastSet(2);
    s.setValueCount(3);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(i, s));
    root.setRowCount(3);
    return root;
  }

  /** Whether {@code batch} read as a chunk of one batch into {@code into} kept its i64 column's and its string column's buffers. */
  private static List<Boolean> handedOver(BufferAllocator readerAllocator, BufferAllocator into, VectorSchemaRoot batch)
      throws Exception {
    try (ListReader reader = new ListReader(readerAllocator, List.of(batch));
        VectorSchemaRoot got = Batches.append(reader, into, 1, "test")) {
      TestTables.assertSameData(batch, got);
      assertEquals(0, ((VarCharVector) got.getVector("str")).getOffsetBuffer().getInt(0), "offsets start at 0");
      List<Boolean> kept = new ArrayList<>();
      for (String column : List.of("i64", "str")) {
        kept.add(got.getVector(column).getDataBuffer().memoryAddress() == batch.getVector(column).getDataBuffer().memoryAddress());
      }
      return kept;
    }
  }
}
