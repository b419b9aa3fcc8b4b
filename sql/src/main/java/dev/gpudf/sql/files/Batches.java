package dev.gpudf.sql.files;

import dev.gpudf.columnar.ArrowDictionaries;
import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.Parallel;
import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.util.TransferPair;

/**
 * Record batches of an Arrow reader gathered into one root. Batches are taken from the reader in
 * groups (their buffers moved out, so the reader decodes the next into new ones); a group's
 * batches are checked column by column on all cores, then each column gathers the group's batches
 * on a core of its own. A group holds at most {@link #GROUP} batches besides the root being
 * gathered: the memory a read needs is the chunk's plus that.
 */
public final class Batches {
  /** Batches a group holds at most: enough to give every core a column check. */
  static final int GROUP = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

  private Batches() {}

  /**
   * The rows of the next {@code maxBatches} batches of {@code reader} (fewer at its end) in one
   * root from {@code allocator}, dictionary-encoded columns decoded to their values; the caller
   * closes it. Each batch is checked first ({@link ArrowInput}); {@code source} names the input
   * in the error for a malformed one.
   */
  public static VectorSchemaRoot append(ArrowReader reader, BufferAllocator allocator, long maxBatches, String source)
      throws IOException {
    return append(reader, allocator, maxBatches, 0, source);
  }

  /**
   * {@link #append(ArrowReader, BufferAllocator, long, String)} into columns sized for {@code
   * expectedRows} rows up front (a hint: more rows still fit), so that fixed-width columns are
   * copied once instead of grown batch by batch. One batch ({@code maxBatches} 1) whose buffers
   * can be handed over as they are is not copied ({@link #canHandOver}).
   */
  public static VectorSchemaRoot append(ArrowReader reader, BufferAllocator allocator, long maxBatches, int expectedRows,
      String source) throws IOException {
    try {
      VectorSchemaRoot read = reader.getVectorSchemaRoot();
      ArrowInput.checkSchema(read.getSchema(), source);
      return ArrowDictionaries.encoded(read.getSchema()) ? appendDecoded(reader, allocator, maxBatches, source)
          : appendGroups(reader, allocator, maxBatches, expectedRows, source);
    } catch (GpudfException e) {
      throw e;
    } catch (RuntimeException e) {
      // Arrow's reader checks each buffer against its message before slicing it, and says so with
      // an unchecked exception: from a file or a client that is damaged input, not a bug of gpudf
      throw new UserException(source + " is damaged: " + e.getMessage(), e);
    }
  }

  private static VectorSchemaRoot appendGroups(ArrowReader reader, BufferAllocator allocator, long maxBatches,
      int expectedRows, String source) throws IOException {
    VectorSchemaRoot read = reader.getVectorSchemaRoot();
    VectorSchemaRoot out = VectorSchemaRoot.create(read.getSchema(), allocator);
    List<VectorSchemaRoot> group = new ArrayList<>();
    try {
      int rows = 0;
      long taken = 0;
      boolean allocated = false;
      while (true) {
        while (group.size() < GROUP && taken < maxBatches && reader.loadNextBatch()) {
          group.add(moved(read, allocator, source, ++taken));
        }
        if (group.isEmpty()) {
          break;
        }
        check(group, reader, taken - group.size(), source);
        if (maxBatches == 1 && canHandOver(group.get(0), allocator)) {
          out.close();
          return group.remove(0);
        }
        if (!allocated) {
          allocate(out, expectedRows);
          allocated = true;
        }
        int[] at = new int[group.size()];
        for (int b = 0; b < group.size(); b++) {
          at[b] = rows;
          if ((long) rows + group.get(b).getRowCount() > Integer.MAX_VALUE) {
            throw new UserException(source + " holds more than " + Integer.MAX_VALUE + " rows in one piece: read it in"
                + " smaller chunks (-Dgpudf.files.chunkRows)");
          }
          rows += group.get(b).getRowCount();
        }
        // a column's batches go in order (each starts where the last ended); columns are apart
        Parallel.forEach(out.getFieldVectors().size(), () -> { }, c -> {
          for (int b = 0; b < group.size(); b++) {
            ColumnAppend.append(out.getVector(c), at[b], group.get(b).getVector(c));
          }
        });
        out.setRowCount(rows);
        group.forEach(VectorSchemaRoot::close);
        group.clear();
      }
      if (!allocated) {
        allocate(out, 0);
      }
      return out;
    } catch (RuntimeException | IOException e) {
      out.close();
      throw e;
    } finally {
      group.forEach(VectorSchemaRoot::close);
    }
  }

  /**
   * The reader's current batch (number {@code number} of this read) moved into a root of its own,
   * from {@code allocator} where it shares the reader's root allocator (else the reader's); the
   * caller closes it.
   */
  private static VectorSchemaRoot moved(VectorSchemaRoot read, BufferAllocator allocator, String source, long number) {
    if (read.getRowCount() < 0) {
      throw new UserException(source + ", record batch " + number + ": a batch with " + read.getRowCount() + " rows");
    }
    List<FieldVector> out = new ArrayList<>();
    for (FieldVector v : read.getFieldVectors()) {
      TransferPair pair = v.getTransferPair(v.getAllocator().getRoot() == allocator.getRoot() ? allocator : v.getAllocator());
      pair.transfer();
      out.add((FieldVector) pair.getTo());
    }
    VectorSchemaRoot root = new VectorSchemaRoot(out);
    root.setRowCount(read.getRowCount());
    return root;
  }

  /** Checks every column of every batch of {@code group} (batches {@code before} + 1 ... of the read) on all cores. */
  private static void check(List<VectorSchemaRoot> group, ArrowReader reader, long before, String source) {
    int columns = group.get(0).getFieldVectors().size();
    Parallel.forEach(group.size() * columns, () -> { }, i -> {
      VectorSchemaRoot batch = group.get(i / columns);
      ArrowInput.checkColumn(batch.getVector(i % columns), batch.getRowCount(), reader,
          source + ", record batch " + (before + 1 + i / columns));
    });
  }

  /** Batches with dictionary-encoded columns, decoded one at a time (a batch's dictionaries are the reader's then). */
  private static VectorSchemaRoot appendDecoded(ArrowReader reader, BufferAllocator allocator, long maxBatches,
      String source) throws IOException {
    VectorSchemaRoot read = reader.getVectorSchemaRoot();
    VectorSchemaRoot out = VectorSchemaRoot.create(ArrowDictionaries.decoded(read.getSchema(), reader), allocator);
    try {
      allocate(out, 0);
      int rows = 0;
      for (long b = 0; b < maxBatches && reader.loadNextBatch(); b++) {
        ArrowInput.check(read, reader, source + ", record batch " + (b + 1));
        try (VectorSchemaRoot decoded = ArrowDictionaries.decode(read, reader, allocator)) {
          for (int c = 0; c < decoded.getFieldVectors().size(); c++) {
            ColumnAppend.append(out.getVector(c), rows, decoded.getVector(c));
          }
          rows += decoded.getRowCount();
        }
        out.setRowCount(rows);
      }
      return out;
    } catch (RuntimeException | IOException e) {
      out.close();
      throw e;
    }
  }

  /** Allocates {@code out}'s columns, for {@code expectedRows} rows when more than 0. */
  private static void allocate(VectorSchemaRoot out, int expectedRows) {
    // appending reads the target's offsets, which an unallocated string vector lacks
    if (expectedRows > 0) {
      out.getFieldVectors().forEach(v -> v.setInitialCapacity(expectedRows));
    }
    out.allocateNew();
  }

  /**
   * True when {@code batch}'s buffers can become a chunk's as they are: they are {@code
   * allocator}'s ({@link #moved}), and strings' offsets start at 0 (as a gathered chunk's do,
   * which the host operators rely on). A chunk of one batch, the host's chunk size, then costs no
   * copy: allocating and filling columns anew was most of a Parquet scan's time there.
   */
  private static boolean canHandOver(VectorSchemaRoot batch, BufferAllocator allocator) {
    return batch.getFieldVectors().stream().allMatch(v -> v.getAllocator() == allocator
        && (!(v instanceof BaseVariableWidthVector w) || v.getValueCount() == 0 || w.getOffsetBuffer().getInt(0) == 0));
  }
}
