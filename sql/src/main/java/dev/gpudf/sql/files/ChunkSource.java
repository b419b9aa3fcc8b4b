package dev.gpudf.sql.files;

import dev.gpudf.formats.ValueRange;
import dev.gpudf.columnar.DataType;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The rows of a table kept in files, as the catalog sees them: the shape is known from metadata
 * when the table is opened, and a chunk's columns are read only when a query scans them. The
 * catalog owns a source and closes it when the table is dropped. Implementations need not be
 * thread-safe: the catalog's lock guards every call.
 */
public interface ChunkSource extends AutoCloseable {
  /** Column names, in the file's order. */
  List<String> names();

  /** Column types, in the file's order. */
  List<DataType> types();

  /** Rows of each chunk, in order. */
  List<Integer> chunkRows();

  /**
   * Columns {@code columns} (indexes into {@link #names}, in that order) of chunk {@code chunk},
   * read from the files; the caller closes the root. A file that no longer matches what was
   * opened (changed, truncated, corrupt) is a {@link dev.gpudf.columnar.error.UserException}
   * naming it.
   */
  VectorSchemaRoot read(int chunk, int[] columns, BufferAllocator allocator);

  /**
   * A {@link dev.gpudf.columnar.error.UserException} naming the file when the file that chunk
   * {@code chunk} comes from changed since it was opened: a GPU catalog keeps columns it read on
   * the device and checks before each use that they are still the file's.
   */
  void check(int chunk);

  /**
   * What the files' metadata tells of column {@code column} in chunk {@code chunk}, or null when
   * it tells nothing (then every chunk is read).
   */
  default ValueRange range(int chunk, int column) {
    return null;
  }

  /**
   * Column {@code column} of chunk {@code chunk} as stored pages that the device decodes itself
   * ({@link dev.gpudf.kernels.ParquetDecode}), read into {@code into}; the caller closes it. Null
   * when this source cannot give that column so (then {@link #read} reads it).
   */
  default dev.gpudf.kernels.ParquetDecode.Chunk readEncoded(int chunk, int column, BufferAllocator into) {
    return null;
  }

  @Override
  void close();

  /**
   * The check every read starts with: {@code chunk} is one of {@code chunkRows}; a read of no
   * columns (COUNT(*)) needs no file access and gets {@link #rowsOnly}.
   */
  static void checkChunk(Object what, List<Integer> chunkRows, int chunk) {
    if (chunk < 0 || chunk >= chunkRows.size()) {
      throw new dev.gpudf.columnar.error.UserException(what + " has " + chunkRows.size() + " chunks, not " + (chunk + 1));
    }
  }

  /** A root of no columns and {@code rows} rows, from {@code allocator}; the caller closes it. */
  static VectorSchemaRoot rowsOnly(int rows, BufferAllocator allocator) {
    VectorSchemaRoot none = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of()), allocator);
    none.setRowCount(rows);
    return none;
  }

  /**
   * Groups batches of {@code batchRows} rows into chunks of at most {@code chunkRows} rows (one
   * batch where a batch alone holds more); adds each chunk's rows to {@code rowsOut} and the
   * index of its first batch to {@code firstOut}, then the batch count (so chunk i is batches
   * firstOut[i] .. firstOut[i + 1] - 1). No batch gives one chunk of 0 rows.
   */
  static void group(List<Integer> batchRows, int chunkRows, List<Integer> rowsOut, List<Integer> firstOut) {
    group(batchRows, chunkRows, null, Long.MAX_VALUE, rowsOut, firstOut);
  }

  /**
   * As {@link #group(List, int, List, List)}, and a chunk also ends before its batches' {@code
   * batchBytes} (each batch's estimated bytes of its widest string column; null for none) pass
   * {@code maxBytes}: a chunk's string column is one Arrow vector, which holds at most 2 GiB.
   */
  static void group(List<Integer> batchRows, int chunkRows, long[] batchBytes, long maxBytes, List<Integer> rowsOut,
      List<Integer> firstOut) {
    int rows = 0;
    long bytes = 0;
    firstOut.add(0);
    for (int b = 0; b < batchRows.size(); b++) {
      int n = batchRows.get(b);
      long w = batchBytes == null ? 0 : batchBytes[b];
      // (w > maxBytes - bytes, not bytes + w > maxBytes: estimates from a footer can be near Long.MAX_VALUE)
      if (b > firstOut.get(firstOut.size() - 1) && (rows + (long) n > chunkRows || w > maxBytes - bytes)) {
        rowsOut.add(rows);
        firstOut.add(b);
        rows = 0;
        bytes = 0;
      }
      rows += n;
      bytes = w > Long.MAX_VALUE - bytes ? Long.MAX_VALUE : bytes + w;
    }
    rowsOut.add(rows);
    firstOut.add(batchRows.size());
  }
}
