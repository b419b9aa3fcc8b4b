package dev.gpudf.bench;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowReader} over a root already in memory, in batches of 1M rows, so it can be
 * exported through the Arrow C stream interface (to DuckDB). The caller keeps the root.
 */
final class RootReader extends ArrowReader {
  private static final int BATCH_ROWS = 1 << 20;
  private final VectorSchemaRoot source;
  private int next;

  RootReader(BufferAllocator allocator, VectorSchemaRoot source) {
    super(allocator);
    this.source = source;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    if (next >= source.getRowCount()) {
      return false;
    }
    int rows = Math.min(BATCH_ROWS, source.getRowCount() - next);
    try (VectorSchemaRoot slice = source.slice(next, rows); ArrowRecordBatch batch = new VectorUnloader(slice).getRecordBatch()) {
      new VectorLoader(getVectorSchemaRoot()).load(batch);
    }
    next += rows;
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
