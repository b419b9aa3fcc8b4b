package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import dev.gpudf.sql.files.ChunkSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A chunk source around another that notes each read (chunk, columns read, thread), and can hold
 * a read until released: tests see what a scan read, and when.
 */
final class RecordingSource implements ChunkSource {
  final ChunkSource inner;
  final List<String> reads = Collections.synchronizedList(new ArrayList<>());
  // how many columns each read asked for, in the order of reads
  final List<Integer> widths = Collections.synchronizedList(new ArrayList<>());
  volatile CountDownLatch hold;
  final CountDownLatch reading = new CountDownLatch(1);
  volatile boolean closed;

  RecordingSource(ChunkSource inner) {
    this.inner = inner;
  }

  @Override
  public List<String> names() {
    return inner.names();
  }

  @Override
  public List<DataType> types() {
    return inner.types();
  }

  @Override
  public List<Integer> chunkRows() {
    return inner.chunkRows();
  }

  @Override
  public VectorSchemaRoot read(int chunk, int[] columns, BufferAllocator allocator) {
    reads.add(chunk + " " + Thread.currentThread().getName() + (closed ? " after close" : ""));
    widths.add(columns.length);
    reading.countDown();
    CountDownLatch h = hold;
    if (h != null) {
      try {
        assertTrue(h.await(30, TimeUnit.SECONDS), "held read released");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return inner.read(chunk, columns, allocator);
  }

  @Override
  public void check(int chunk) {
    inner.check(chunk);
  }

  @Override
  public void close() {
    closed = true;
    inner.close();
  }
}
