package dev.gpudf.sql.files;

import dev.gpudf.formats.FileStamp;
import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.VectorBatchAppender;

/**
 * An Arrow IPC file as a {@link ChunkSource}. Opening reads the footer (schema, record batch
 * blocks) and each batch's message header for its row count, not the batches; a chunk is a run of
 * consecutive batches ({@link ChunkSource#group}), read by seeking to them (all of a batch's
 * columns are read; those not asked for are dropped at once). The file's size and modification
 * time are checked before each read. Dictionary-encoded files are not opened this way ({@link
 * #encoded}): they are read whole.
 */
public final class ArrowIpcSource implements ChunkSource {
  private final Path file;
  private final List<String> names = new ArrayList<>();
  private final List<DataType> types = new ArrayList<>();
  private final List<Integer> chunkRows = new ArrayList<>();
  private final List<Integer> firstBlock = new ArrayList<>();
  private final FileStamp stamp;

  private ArrowIpcSource(Path file, BufferAllocator allocator, int chunkRows) throws IOException {
    this.file = file;
    stamp = FileStamp.of(file);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(ch, allocator)) {
      Schema schema = reader.getVectorSchemaRoot().getSchema();
      ArrowInput.checkSchema(schema, file.toString());
      for (Field f : schema.getFields()) {
        names.add(f.getName());
        types.add(ArrowTypes.fromArrow(f));
      }
      List<Integer> batchRows = ArrowIpcBlocks.check(ch, reader, stamp.size(), file);
      ChunkSource.group(batchRows, chunkRows, this.chunkRows, firstBlock);
    }
  }

  /** Whether {@code file}'s schema has dictionary-encoded columns (such a file is not opened lazily). */
  public static boolean encoded(Path file, BufferAllocator allocator) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        ArrowFileReader reader = new ArrowFileReader(ch, allocator)) {
      return reader.getVectorSchemaRoot().getSchema().getFields().stream().anyMatch(f -> f.getDictionary() != null);
    } catch (IOException | RuntimeException e) {
      throw new UserException("cannot read Arrow file " + file + ": " + e.getMessage(), e);
    }
  }

  /** Opens {@code file} (its footer and batch headers only); the caller owns the source. */
  public static ArrowIpcSource open(Path file, BufferAllocator allocator, int chunkRows) {
    try {
      return new ArrowIpcSource(file, allocator, Math.max(1, chunkRows));
    } catch (GpudfException e) {
      throw new UserException(file + ": " + e.getMessage(), e);
    } catch (IOException | RuntimeException e) {
      throw new UserException("cannot read Arrow file " + file + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void check(int chunk) {
    ChunkSource.checkChunk(file, chunkRows, chunk);
    stamp.check();
  }

  @Override
  public List<String> names() {
    return names;
  }

  @Override
  public List<DataType> types() {
    return types;
  }

  @Override
  public List<Integer> chunkRows() {
    return chunkRows;
  }

  @Override
  public VectorSchemaRoot read(int chunk, int[] columns, BufferAllocator into) {
    ChunkSource.checkChunk(file, chunkRows, chunk);
    if (columns.length == 0) {
      return ChunkSource.rowsOnly(chunkRows.get(chunk), into);
    }
    stamp.check();
    try {
      List<FieldVector> out = new ArrayList<>();
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
          ArrowFileReader reader = new ArrowFileReader(ch, into)) {
        VectorSchemaRoot batch = reader.getVectorSchemaRoot();
        for (int c : columns) {
          out.add(batch.getVector(c).getField().createVector(into));
        }
        for (FieldVector v : out) {
          v.allocateNew();
        }
        int rows = 0;
        List<ArrowBlock> blocks = reader.getRecordBlocks();
        for (int b = firstBlock.get(chunk); b < firstBlock.get(chunk + 1); b++) {
          if (!reader.loadRecordBatch(blocks.get(b))) {
            throw new UserException(file + " lost record batch " + b + ": it changed since it was opened");
          }
          ArrowInput.check(batch, reader, file + ", record batch " + b);
          for (int i = 0; i < columns.length; i++) {
            VectorBatchAppender.batchAppend(out.get(i), batch.getVector(columns[i]));
          }
          rows += batch.getRowCount();
        }
        if (rows != chunkRows.get(chunk)) {
          throw new UserException(file + " chunk " + chunk + " holds " + rows + " rows where its headers said "
              + chunkRows.get(chunk) + ": it changed since it was opened");
        }
        VectorSchemaRoot root = new VectorSchemaRoot(out);
        root.setRowCount(rows);
        return root;
      } catch (IOException | RuntimeException e) {
        out.forEach(FieldVector::close);
        throw e;
      }
    } catch (UserException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new UserException("cannot read Arrow file " + file + " (chunk " + chunk + "): " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    // nothing is held open between reads
  }
}
