package dev.gpudf.flight;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.arrow.flight.BackpressureStrategy;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Streams a result to a Flight client in batches, waiting for the client to take each one (gRPC
 * flow control), so a slow reader holds back the sender instead of queueing the whole result in
 * memory; a client that goes away, or the server closing, ends the stream at the next batch.
 */
final class ResultSender {
  /** Rows per record batch. */
  static final int BATCH_ROWS = 64 * 1024;
  /** How long a client may leave a batch unread before the stream is failed. */
  private static final long READ_TIMEOUT_MS = 60_000;
  /**
   * How often the sender reads the call's state while it waits. Flight's ready and cancel
   * callbacks cannot wake it: gRPC runs a call's callbacks one at a time on the call's executor, and
   * this send is itself such a callback, so they queue behind it. Waiting on them alone held every
   * reader that paused long enough to fill the send window for the whole read timeout, then failed
   * it, and kept a departed client's batch on the server as long.
   */
  private static final long POLL_MS = 50;

  /** What a wait for the client came to. */
  private enum Wait { READY, CANCELLED, TIMED_OUT, SERVER_CLOSING }

  private final BufferAllocator allocator;
  private final BooleanSupplier serverClosing;

  /** Sends batches from {@code allocator}; a stream ends early once {@code serverClosing} says so. */
  ResultSender(BufferAllocator allocator, BooleanSupplier serverClosing) {
    this.allocator = allocator;
    this.serverClosing = serverClosing;
  }

  /** Sends every row of {@code result} (which the caller keeps) and completes the stream. */
  void send(VectorSchemaRoot result, ServerStreamListener listener) {
    BackpressureStrategy backpressure = new BackpressureStrategy.CallbackBackpressureStrategy();
    backpressure.register(listener);
    try (VectorSchemaRoot out = VectorSchemaRoot.create(result.getSchema(), allocator)) {
      listener.start(out);
      VectorLoader loader = new VectorLoader(out);
      int rows = result.getRowCount();
      for (int from = 0; from < rows; from += BATCH_ROWS) {
        Wait ready = awaitClient(backpressure);
        if (ready != Wait.READY) {
          // end the call, so gRPC drops the batches it still holds for a departed client
          CallStatus why = switch (ready) {
            case CANCELLED -> CallStatus.CANCELLED.withDescription("the client cancelled the stream");
            case SERVER_CLOSING -> CallStatus.UNAVAILABLE.withDescription("the server is shutting down");
            default -> CallStatus.TIMED_OUT.withDescription("the client did not read a batch for "
                + READ_TIMEOUT_MS / 1000 + " s");
          };
          listener.error(why.toRuntimeException());
          return;
        }
        try (VectorSchemaRoot slice = result.slice(from, Math.min(BATCH_ROWS, rows - from));
            ArrowRecordBatch batch = new VectorUnloader(slice).getRecordBatch()) {
          loader.load(batch);
        }
        listener.putNext();
      }
      listener.completed();
    }
  }

  private Wait awaitClient(BackpressureStrategy backpressure) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_TIMEOUT_MS);
    while (!serverClosing.getAsBoolean()) {
      // each wait starts by reading isReady and isCancelled, which gRPC keeps current itself
      BackpressureStrategy.WaitResult ready = backpressure.waitForListener(POLL_MS);
      if (ready == BackpressureStrategy.WaitResult.READY) {
        return Wait.READY;
      }
      if (ready == BackpressureStrategy.WaitResult.CANCELLED) {
        return Wait.CANCELLED;
      }
      if (ready != BackpressureStrategy.WaitResult.TIMEOUT || System.nanoTime() >= deadline) {
        return Wait.TIMED_OUT;
      }
    }
    return Wait.SERVER_CLOSING;
  }
}
