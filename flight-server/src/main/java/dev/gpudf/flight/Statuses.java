package dev.gpudf.flight;

import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.QueryCancelledException;
import dev.gpudf.columnar.error.QueryMemoryLimitException;
import dev.gpudf.columnar.error.UserException;
import java.util.function.Supplier;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gpudf's typed errors as Flight statuses: a user error is INVALID_ARGUMENT, an unsupported
 * feature UNIMPLEMENTED, device or host memory exhaustion and a query past its time or memory
 * limit RESOURCE_EXHAUSTED, a cancelled query CANCELLED, anything else INTERNAL
 * (logged with its stack trace). The wrappers run a call's work and send its failure to the
 * client, so no request can take the server down.
 */
final class Statuses {
  private static final Logger LOG = LoggerFactory.getLogger(Statuses.class);

  private Statuses() {}

  /** Work that may throw; the checked exceptions of stream and I/O calls become statuses too. */
  interface Work {
    void run() throws Exception;
  }

  static FlightRuntimeException of(Throwable e) {
    if (e instanceof FlightRuntimeException f) {
      return f;
    }
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    CallStatus status;
    if (e instanceof UserException) {
      status = CallStatus.INVALID_ARGUMENT;
    } else if (e instanceof NotSupportedException) {
      status = CallStatus.UNIMPLEMENTED;
    } else if (e instanceof GpuOutOfMemoryException || e instanceof QueryMemoryLimitException
        || e instanceof org.apache.arrow.memory.OutOfMemoryException) {
      status = CallStatus.RESOURCE_EXHAUSTED;
    } else if (e instanceof QueryCancelledException c) {
      status = c.timedOut() ? CallStatus.RESOURCE_EXHAUSTED : CallStatus.CANCELLED;
    } else {
      LOG.error("internal error serving a Flight SQL call", e);
      status = CallStatus.INTERNAL;
      message = "internal error: " + e;
    }
    return status.withDescription(message).withCause(e).toRuntimeException();
  }

  /** The value of {@code work}, or its failure as a {@link FlightRuntimeException}. */
  static <T> T guard(Supplier<T> work) {
    try {
      return work.get();
    } catch (RuntimeException e) {
      throw of(e);
    }
  }

  /** Runs {@code work}, which streams to {@code listener}; a failure ends the stream with its status. */
  static void stream(ServerStreamListener listener, Work work) {
    try {
      work.run();
    } catch (Exception | Error e) {
      listener.error(of(e));
    }
  }

  /** Runs {@code work} for an action or DoPut and completes {@code listener}, or fails it with the status. */
  static <T> void action(StreamListener<T> listener, Work work) {
    try {
      work.run();
      listener.onCompleted();
    } catch (Exception | Error e) {
      listener.onError(of(e));
    }
  }

  /** {@link #action} for the acknowledgement stream of a DoPut. */
  static <T> void put(StreamListener<T> ackStream, Work work) {
    action(ackStream, work);
  }
}
