package org.apache.arrow.flight;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gpudf's check of the Arrow messages a client streams in (DoPut, DoExchange), before Flight's
 * {@link FlightStream} reads them: a record or dictionary batch whose header does not fit its body
 * (a buffer past the body's end, a malformed header) ends the call with INVALID_ARGUMENT naming the
 * message. It lives in Flight's package because the parsed message type is package-private there.
 *
 * <p>Why: Flight 18's {@code ArrowMessage.asRecordBatch} retains the body before decoding the header
 * and never releases it when decoding fails, so each such message would keep its body (up to the
 * largest message allowed) on the server for good. Here the same decoding runs on the body without
 * that retain; a message that fails is closed and never reaches the stream, which hears a
 * cancellation, and the call's status is replaced by the reason. A stream whose first message
 * names no command is refused the same way: Flight's server would wait for that name forever.
 *
 * <p>A message Flight cannot parse at all fails inside gRPC, before any listener hears of it, and
 * gRPC then still delivers the client's half-close: the stream would end as if whole and an
 * ingest commit the batches before the bad one. So the transport's count of messages received
 * ({@link #TRACER}) is compared at half-close with the messages that arrived here, and a stream
 * that lost one is refused instead.
 */
@SuppressWarnings("unchecked")
public final class InboundMessageCheck implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(InboundMessageCheck.class);
  private static final io.grpc.Context.Key<java.util.concurrent.atomic.AtomicLong> RECEIVED =
      io.grpc.Context.key("gpudf.inboundMessages");

  /** Counts each call's messages as the transport frames them, before parsing; install with the interceptor. */
  public static final io.grpc.ServerStreamTracer.Factory TRACER = new io.grpc.ServerStreamTracer.Factory() {
    @Override
    public io.grpc.ServerStreamTracer newServerStreamTracer(String method, Metadata headers) {
      java.util.concurrent.atomic.AtomicLong received = new java.util.concurrent.atomic.AtomicLong();
      return new io.grpc.ServerStreamTracer() {
        @Override
        public io.grpc.Context filterContext(io.grpc.Context context) {
          return context.withValue(RECEIVED, received);
        }

        @Override
        public void inboundMessage(int seqNo) {
          received.incrementAndGet();
        }
      };
    }
  };

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (call.getMethodDescriptor().getType().clientSendsOneMessage()) {
      return next.startCall(call, headers);
    }
    AtomicReference<String> refused = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicLong received = RECEIVED.get();
    ServerCall<Q, R> reporting = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        String why = refused.get();
        super.close(why == null ? status : Status.INVALID_ARGUMENT.withDescription(why), trailers);
      }
    };
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(reporting, headers)) {
      private long messages;
      private boolean named;

      @Override
      public void onMessage(Q message) {
        messages++;
        String problem = refused.get() != null ? "" : messages == 1 ? first(message) : problem(message);
        if (problem == null) {
          named = true;
          super.onMessage(message);
          return;
        }
        close(message);
        refuse(messages, problem);
      }

      @Override
      public void onHalfClose() {
        if (received != null && received.get() > messages) {
          refuse(messages + 1, "it could not be parsed as Flight data");
        }
        if (refused.get() == null) {
          super.onHalfClose();
        }
      }

      private void refuse(long message, String problem) {
        if (refused.compareAndSet(null, "message " + message + " of the stream is malformed: " + problem)) {
          LOG.warn("refused a client's Arrow stream: message {}: {}", message, problem);
          if (!named) {
            // the server's handler waits for a descriptor before anything else: an empty one ends that wait
            super.onMessage((Q) new ArrowMessage(org.apache.arrow.flight.impl.Flight.FlightDescriptor.getDefaultInstance()));
          }
          super.onCancel();
        }
      }

      @Override
      public void onCancel() {
        if (refused.get() == null) {
          super.onCancel();
        }
      }
    };
  }

  /**
   * What is wrong with the first message of a stream, or null: it must name the stream's command
   * (Flight's server waits for a descriptor that never comes, holding a thread for good, when the
   * first message has none).
   */
  private static String first(Object message) {
    if (message instanceof ArrowMessage m && m.getDescriptor() == null) {
      return "the first message carries no FlightDescriptor";
    }
    return problem(message);
  }

  /** What is wrong with {@code message}, or null when Flight can decode it safely. */
  private static String problem(Object message) {
    if (!(message instanceof ArrowMessage m)) {
      return null;
    }
    ArrowMessage.HeaderType type = m.getMessageType();
    if (type != ArrowMessage.HeaderType.RECORD_BATCH && type != ArrowMessage.HeaderType.DICTIONARY_BATCH) {
      return null;
    }
    java.util.Iterator<ArrowBuf> bufs = m.getBufs().iterator();
    if (!bufs.hasNext()) {
      return "a batch without a body";
    }
    ArrowBuf body = bufs.next();
    // the decoding Flight's stream does next, on the same header and body: it consumes one
    // reference to the body when it succeeds, and here that reference is given back when it fails
    body.getReferenceManager().retain();
    try {
      if (type == ArrowMessage.HeaderType.RECORD_BATCH) {
        MessageSerializer.deserializeRecordBatch(m.asSchemaMessage(), body).close();
      } else {
        MessageSerializer.deserializeDictionaryBatch(m.asSchemaMessage(), body).close();
      }
      return null;
    } catch (RuntimeException | java.io.IOException e) {
      body.getReferenceManager().release();
      return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
  }

  private static void close(Object message) {
    if (message instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("could not release a refused message", e);
      }
    }
  }
}
