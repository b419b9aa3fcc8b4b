package dev.gpudf.sql.files;

import dev.gpudf.columnar.ArrowDictionaries;
import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.Parallel;
import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
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
          allocate(out, allocator, expectedRows);
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
        gather(out, group, at, rows);
        out.setRowCount(rows);
        group.forEach(VectorSchemaRoot::close);
        group.clear();
      }
      if (!allocated) {
        allocate(out, allocator, 0);
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
   * Copies the batches of {@code group} to rows {@code at[b]} ... of {@code out} ({@code rows} in
   * all after them) on all cores: the values of a fixed-width column batch by batch side by side,
   * then its validity bits in order; any other column (strings, each batch's bytes after the last's;
   * bits) batch after batch on a core of its own.
   */
  private static void gather(VectorSchemaRoot out, List<VectorSchemaRoot> group, int[] at, int rows) {
    int columns = out.getFieldVectors().size();
    boolean[] split = new boolean[columns];
    List<Integer> fixed = new ArrayList<>();
    for (int c = 0; c < columns; c++) {
      int column = c;
      split[c] = group.stream().allMatch(b -> ColumnAppend.fixedWidth(out.getVector(column), b.getVector(column)));
      if (split[c]) {
        ColumnAppend.reserve(out.getVector(c), rows);
        fixed.add(c);
      }
    }
    // tasks: one per (fixed-width column, batch), then one per other column
    int pieces = fixed.size() * group.size();
    List<Integer> whole = new ArrayList<>();
    for (int c = 0; c < columns; c++) {
      if (!split[c]) {
        whole.add(c);
      }
    }
    Parallel.forEach(pieces + whole.size(), () -> { }, t -> {
      if (t < pieces) {
        int c = fixed.get(t / group.size());
        int b = t % group.size();
        ColumnAppend.values(out.getVector(c), at[b], group.get(b).getVector(c));
      } else {
        int c = whole.get(t - pieces);
        for (int b = 0; b < group.size(); b++) {
          ColumnAppend.append(out.getVector(c), at[b], group.get(b).getVector(c));
        }
      }
    });
    Parallel.forEach(fixed.size(), () -> { }, i -> {
      for (int b = 0; b < group.size(); b++) {
        ColumnAppend.validity(out.getVector(fixed.get(i)), at[b], group.get(b).getVector(fixed.get(i)));
      }
    });
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
      allocate(out, allocator, 0);
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

  /**
   * Allocates {@code out}'s columns, for {@code expectedRows} rows when more than 0. Values of
   * fixed width are left as they are, not zeroed (the gather writes every row's; Arrow's {@code
   * allocateNew} zeroes them, a memory-wide pass that took a third of a chunk's gather): only the
   * validity bits are zeroed, as the gather ORs bits in.
   */
  private static void allocate(VectorSchemaRoot out, BufferAllocator allocator, int expectedRows) {
    for (FieldVector v : out.getFieldVectors()) {
      if (expectedRows > 0 && v instanceof BaseFixedWidthVector f && !(v instanceof BitVector)) {
        try (ArrowBuf validity = allocator.buffer((expectedRows + 7) / 8);
            ArrowBuf values = allocator.buffer((long) expectedRows * f.getTypeWidth())) {
          validity.setZero(0, validity.capacity());
          // the vector takes its own references to both (a validity buffer of some bytes is kept as given)
          f.loadFieldBuffers(new ArrowFieldNode(0, 0), List.of(validity, values));
        }
      } else {
        // appending reads the target's offsets, which an unallocated string vector lacks
        if (expectedRows > 0) {
          v.setInitialCapacity(expectedRows);
        }
        v.allocateNew();
      }
    }
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
