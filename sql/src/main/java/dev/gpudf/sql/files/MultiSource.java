package dev.gpudf.sql.files;

import dev.gpudf.formats.ValueRange;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Several files of one schema as one table: the chunks of each file, one file after another.
 * Files whose column names or types differ are refused, naming both files and both schemas.
 */
public final class MultiSource implements ChunkSource {
  private final List<ChunkSource> parts;
  private final List<Integer> chunkRows = new ArrayList<>();
  // chunk i is chunk local[i] of part owner[i]
  private final List<Integer> owner = new ArrayList<>();
  private final List<Integer> local = new ArrayList<>();

  /**
   * One table of {@code parts} (named by {@code labels}, for errors), which it takes: they are
   * closed with it, or here when they do not match.
   */
  public MultiSource(List<? extends ChunkSource> parts, List<String> labels) {
    this.parts = List.copyOf(parts);
    try {
      if (parts.isEmpty()) {
        throw new UserException("a table needs at least one file");
      }
      ChunkSource first = parts.get(0);
      for (int p = 0; p < parts.size(); p++) {
        ChunkSource s = parts.get(p);
        if (!s.names().equals(first.names()) || !s.types().equals(first.types())) {
          throw new UserException(labels.get(p) + " has columns " + describe(s) + " where " + labels.get(0) + " has "
              + describe(first) + ": the files of one table must have one schema");
        }
        for (int c = 0; c < s.chunkRows().size(); c++) {
          chunkRows.add(s.chunkRows().get(c));
          owner.add(p);
          local.add(c);
        }
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  private static String describe(ChunkSource s) {
    List<String> cols = new ArrayList<>();
    for (int i = 0; i < s.names().size(); i++) {
      cols.add(s.names().get(i) + " " + s.types().get(i));
    }
    return cols.toString();
  }

  @Override
  public List<String> names() {
    return parts.get(0).names();
  }

  @Override
  public List<DataType> types() {
    return parts.get(0).types();
  }

  @Override
  public List<Integer> chunkRows() {
    return chunkRows;
  }

  /** The part chunk {@code chunk} comes from; a chunk past the table is a {@link UserException}. */
  private ChunkSource part(int chunk) {
    if (chunk < 0 || chunk >= chunkRows.size()) {
      throw new UserException("the table has " + chunkRows.size() + " chunks, not " + (chunk + 1));
    }
    return parts.get(owner.get(chunk));
  }

  @Override
  public VectorSchemaRoot read(int chunk, int[] columns, BufferAllocator allocator) {
    return part(chunk).read(local.get(chunk), columns, allocator);
  }

  @Override
  public dev.gpudf.kernels.ParquetDecode.Chunk readEncoded(int chunk, int column, BufferAllocator allocator) {
    return part(chunk).readEncoded(local.get(chunk), column, allocator);
  }

  @Override
  public void check(int chunk) {
    part(chunk).check(local.get(chunk));
  }

  @Override
  public ValueRange range(int chunk, int column) {
    return parts.get(owner.get(chunk)).range(local.get(chunk), column);
  }

  @Override
  public void close() {
    RuntimeException first = null;
    for (ChunkSource s : parts) {
      try {
        s.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
