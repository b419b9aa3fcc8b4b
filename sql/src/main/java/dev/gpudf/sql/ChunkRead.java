package dev.gpudf.sql;

import dev.gpudf.columnar.error.InternalException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Columns of one chunk of a table kept in files, being read on the catalog's reader thread ahead
 * of the scan that will take them ({@link Catalog#readAhead}), so that decoding the next chunk
 * overlaps the upload and the device work of this one. The query that started it owns it
 * ({@link QueryContext}): its scan hands it to {@link Catalog#acquire}, which takes the rows when
 * they are still the columns the chunk lacks and else reads again; either way it closes it. One
 * never taken is closed with the query: closing waits for the read to end and frees its rows.
 */
final class ChunkRead implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ChunkRead.class);
  // the catalog's entry of the table (compared by identity: a table replaced since is another)
  private final Object table;
  private final int chunk;
  private final int[] columns;
  private final CompletableFuture<ChunkColumns> rows;
  private boolean taken;

  ChunkRead(Object table, int chunk, int[] columns, CompletableFuture<ChunkColumns> rows) {
    this.table = table;
    this.chunk = chunk;
    this.columns = columns;
    this.rows = rows;
  }

  /** Whether this read is of chunk {@code chunk} of {@code table} and of every one of {@code columns}, and maybe more. */
  boolean covers(Object table, int chunk, int[] columns) {
    return this.table == table && this.chunk == chunk
        && Arrays.stream(columns).allMatch(c -> Arrays.stream(this.columns).anyMatch(d -> d == c));
  }

  /** The columns read, in their order. */
  int[] columns() {
    return columns.clone();
  }

  /** Whether this read is of columns {@code columns}, in that order, of chunk {@code chunk} of {@code table}. */
  boolean reads(Object table, int chunk, int[] columns) {
    return this.table == table && this.chunk == chunk && Arrays.equals(this.columns, columns);
  }

  /**
   * The columns read, once they are, for the caller, who closes them; the read's own error (a
   * changed or corrupt file names itself) when it failed.
   */
  ChunkColumns take() {
    if (taken) {
      throw new InternalException("a chunk read ahead was taken twice");
    }
    taken = true;
    try {
      return rows.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new InternalException("reading a chunk ahead failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      rows.thenAccept(ChunkColumns::close);
      throw new dev.gpudf.columnar.error.QueryCancelledException("interrupted while a chunk was read", false);
    }
  }

  /** Frees the rows unless taken, after the read has ended (so nothing it allocates outlives the query). */
  @Override
  public void close() {
    if (taken) {
      return;
    }
    taken = true;
    try {
      rows.get().close();
    } catch (ExecutionException e) {
      // nobody asked for these rows; a scan that does reads the chunk itself and meets the error
      LOG.debug("a chunk read ahead and not used failed: {}", e.getCause().toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      rows.thenAccept(ChunkColumns::close);
    }
  }
}
