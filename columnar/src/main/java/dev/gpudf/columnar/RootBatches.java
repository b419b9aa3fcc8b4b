package dev.gpudf.columnar;

import java.io.IOException;
import java.util.function.IntConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A root already in memory read back as an {@link ArrowReader} of batches of at most
 * {@code batchRows} rows, for APIs that take a stream (Flight SQL ingest, the Arrow C stream
 * interface). {@code onBatch} hears each batch's row count as it is loaded. The caller keeps the
 * source root; closing the reader frees only its own batch buffers.
 */
public final class RootBatches extends ArrowReader {
  private final VectorSchemaRoot source;
  private final int batchRows;
  private final IntConsumer onBatch;
  private int next;

  public RootBatches(BufferAllocator allocator, VectorSchemaRoot source, int batchRows, IntConsumer onBatch) {
    super(allocator);
    if (batchRows < 1) {
      throw new IllegalArgumentException("batchRows must be positive");
    }
    this.source = source;
    this.batchRows = batchRows;
    this.onBatch = onBatch;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    if (next >= source.getRowCount()) {
      return false;
    }
    int rows = Math.min(batchRows, source.getRowCount() - next);
    try (VectorSchemaRoot slice = source.slice(next, rows); ArrowRecordBatch batch = new VectorUnloader(slice).getRecordBatch()) {
      new VectorLoader(getVectorSchemaRoot()).load(batch);
    }
    next += rows;
    onBatch.accept(rows);
    return true;
  }

  @Override
  public long bytesRead() {
    return 0;
  }

  @Override
  protected void closeReadSource() {
    // the source root is the caller's
  }

  @Override
  protected Schema readSchema() {
    return source.getSchema();
  }
}
