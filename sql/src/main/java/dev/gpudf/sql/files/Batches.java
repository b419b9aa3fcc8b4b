package dev.gpudf.sql.files;

import dev.gpudf.columnar.ArrowDictionaries;
import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/** Record batches of an Arrow reader gathered into one root. */
public final class Batches {
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
   * copied once instead of grown batch by batch.
   */
  public static VectorSchemaRoot append(ArrowReader reader, BufferAllocator allocator, long maxBatches, int expectedRows,
      String source) throws IOException {
    try {
      return appendChecked(reader, allocator, maxBatches, expectedRows, source);
    } catch (GpudfException e) {
      throw e;
    } catch (RuntimeException e) {
      // Arrow's reader checks each buffer against its message before slicing it, and says so with
      // an unchecked exception: from a file or a client that is damaged input, not a bug of gpudf
      throw new UserException(source + " is damaged: " + e.getMessage(), e);
    }
  }

  private static VectorSchemaRoot appendChecked(ArrowReader reader, BufferAllocator allocator, long maxBatches,
      int expectedRows, String source) throws IOException {
    VectorSchemaRoot read = reader.getVectorSchemaRoot();
    ArrowInput.checkSchema(read.getSchema(), source);
    boolean encoded = ArrowDictionaries.encoded(read.getSchema());
    VectorSchemaRoot out = VectorSchemaRoot.create(encoded ? ArrowDictionaries.decoded(read.getSchema(), reader)
        : read.getSchema(), allocator);
    try {
      // appending reads the target's offsets, which an unallocated string vector lacks
      if (expectedRows > 0) {
        out.getFieldVectors().forEach(v -> v.setInitialCapacity(expectedRows));
      }
      out.allocateNew();
      int rows = 0;
      for (long b = 0; b < maxBatches && reader.loadNextBatch(); b++) {
        ArrowInput.check(read, reader, source + ", record batch " + (b + 1));
        try (VectorSchemaRoot decoded = encoded ? ArrowDictionaries.decode(read, reader, allocator) : null) {
          VectorSchemaRoot in = decoded == null ? read : decoded;
          for (int c = 0; c < in.getFieldVectors().size(); c++) {
            ColumnAppend.append(out.getVector(c), rows, in.getVector(c));
          }
          rows += in.getRowCount();
        }
        out.setRowCount(rows);
      }
      return out;
    } catch (RuntimeException | IOException e) {
      out.close();
      throw e;
    }
  }
}
