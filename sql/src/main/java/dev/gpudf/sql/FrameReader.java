package dev.gpudf.sql;

import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Reads a file into a {@link DataFrame} of a {@link GpuSession} ({@code session.read().csv(path)}):
 * the rows are loaded once, into the session's memory (the device for a GPU session), and stay
 * there until the session closes.
 * <pre>{@code
 * DataFrame orders = session.read().arrow(Path.of("data/orders.arrow"));
 * }</pre>
 */
public final class FrameReader {
  private final GpuSession session;

  FrameReader(GpuSession session) {
    this.session = session;
  }

  /** An Arrow IPC file (all its batches), with its types. */
  public DataFrame arrow(Path file) {
    return load(file, "arrow");
  }

  /** A CSV file with a header row, typed as {@link FileTables} describes. */
  public DataFrame csv(Path file) {
    return load(file, "csv");
  }

  /**
   * A Parquet file, with its types (DECIMAL and DATE included); opened from its footer and read
   * chunk by chunk, only the columns a query needs, each time a query scans it.
   */
  public DataFrame parquet(Path file) {
    return session.frameOf(dev.gpudf.sql.files.ParquetSource.open(file, session.allocator(), FileTables.chunkRows(session.catalog())));
  }

  private DataFrame load(Path file, String format) {
    // the session's allocator: a CPU session's table shares the vectors' buffers
    try (VectorSchemaRoot rows = FileTables.read(file, format, session.allocator())) {
      return session.frameOf(rows);
    } catch (IOException e) {
      throw new UserException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }
}
