package org.apache.arrow.flight;

import io.grpc.ForwardingServerCall;
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
 * {@link FlightStream} reads them; a message that fails it is dropped, the stream's handler hears
 * a cancellation, and the call ends with INVALID_ARGUMENT naming the message and the problem. It
 * lives in Flight's package because the parsed message type is package-private there. Each rule
 * answers a defect of Flight 18 that {@code DoPutFuzzTest} found:
 *
 * <ul>
 *   <li>A batch body is copied into a buffer rounded up to a power of two, not zeroed, and the
 *       header is checked against that capacity: buffers reaching past the bytes sent loaded the
 *       server's stale memory (another call's string) into the batch. Batches are decoded here
 *       against the bytes sent.
 *   <li>{@code ArrowMessage.asRecordBatch} retains the body before decoding and never releases it
 *       when decoding fails: each bad batch kept its body for good. Here that decoding runs
 *       without the leak, and a batch that fails never reaches Flight's.
 *   <li>The handler first waits for the stream's descriptor, then for its schema, and neither wait
 *       ends when the stream fails or ends without them: a thread was held for good per such
 *       call, and its client got no answer. The first message must be a schema or an empty
 *       message with a descriptor, a schema must come before any batch and before the end, and a
 *       schema must be one Flight can take in; a stream that ends with the handler still waiting
 *       for a descriptor is given an empty one.
 *   <li>A batch declaring more rows than its body can hold made Flight's loader size buffers for
 *       them (gigabytes for a few bytes).
 *   <li>A message gRPC cannot parse ends the call without a word to the handler, and gRPC then
 *       still delivers the client's half-close: the stream ended as if whole, and an ingest
 *       committed the batches before the bad one while its client was told the call failed. The
 *       transport's count of framed messages ({@link #TRACER}) is compared with the messages that
 *       arrived, and the transport's end reaches a handler that is still waiting.
 * </ul>
 */
@SuppressWarnings("unchecked")
public final class InboundMessageCheck implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(InboundMessageCheck.class);
  private static final io.grpc.Context.Key<Call> CALL = io.grpc.Context.key("gpudf.inboundCall");

  /**
   * Sees each call's transport: counts its messages as they are framed, before parsing, and hears
   * its end even when gRPC tells the call's listener nothing (a message it could not parse ends
   * the call without a word to the listener). Install with the interceptor.
   */
  public static final io.grpc.ServerStreamTracer.Factory TRACER = new io.grpc.ServerStreamTracer.Factory() {
    @Override
    public io.grpc.ServerStreamTracer newServerStreamTracer(String method, Metadata headers) {
      Call call = new Call();
      return new io.grpc.ServerStreamTracer() {
        @Override
        public io.grpc.Context filterContext(io.grpc.Context context) {
          return context.withValue(CALL, call);
        }

        @Override
        public void inboundMessage(int seqNo) {
          call.received.incrementAndGet();
        }

        @Override
        public void streamClosed(Status status) {
          if (!status.isOk()) {
            call.cancel();
          }
        }
      };
    }
  };

  /** One call's state, shared by its tracer and its listener. */
  private static final class Call {
    final java.util.concurrent.atomic.AtomicLong received = new java.util.concurrent.atomic.AtomicLong();
    final AtomicReference<String> refused = new AtomicReference<>();
    private ServerCall.Listener<Object> handler;
    private boolean named;
    private boolean ended;

    synchronized void start(ServerCall.Listener<?> handler) {
      this.handler = (ServerCall.Listener<Object>) handler;
    }

    synchronized ServerCall.Listener<Object> handler() {
      return handler;
    }

    /** Passes a message the handler may take. */
    synchronized void deliver(Object message) {
      if (ended) {
        close(message);
        return;
      }
      named = true;
      handler.onMessage(message);
    }

    /**
     * Ends the handler's stream with a cancellation, once: Flight's handler first waits for the
     * stream's descriptor, even after the stream failed, so a stream without one gets an empty
     * one, which ends that wait (the handler fails on it) instead of holding its thread for good.
     */
    synchronized void cancel() {
      if (ended || handler == null) {
        return;
      }
      ended = true;
      if (!named) {
        named = true;
        handler.onMessage(new ArrowMessage(org.apache.arrow.flight.impl.Flight.FlightDescriptor.newBuilder()
            .setType(org.apache.arrow.flight.impl.Flight.FlightDescriptor.DescriptorType.CMD).build()));
      }
      handler.onCancel();
    }

    synchronized void halfClose() {
      if (!ended) {
        if (!named) {
          cancel();
          return;
        }
        handler.onHalfClose();
      }
    }

    void refuse(long message, String problem) {
      if (refused.compareAndSet(null, "message " + message + " of the stream is malformed: " + problem)) {
        LOG.warn("refused a client's Arrow stream: message {}: {}", message, problem);
      }
      cancel();
    }
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> serverCall, Metadata headers,
      ServerCallHandler<Q, R> next) {
    Call call = CALL.get();
    // the calls that stream Arrow data in (a handshake streams other messages)
    String method = serverCall.getMethodDescriptor().getBareMethodName();
    if (call == null || !"DoPut".equals(method) && !"DoExchange".equals(method)) {
      return next.startCall(serverCall, headers);
    }
    ServerCall<Q, R> reporting = new ForwardingServerCall.SimpleForwardingServerCall<>(serverCall) {
      @Override
      public void close(Status status, Metadata trailers) {
        String why = call.refused.get();
        super.close(why == null ? status : Status.INVALID_ARGUMENT.withDescription(why), trailers);
      }
    };
    call.start(next.startCall(reporting, headers));
    return new ServerCall.Listener<Q>() {
      private long messages;

      private boolean schema;

      @Override
      public void onMessage(Q message) {
        messages++;
        String problem;
        try {
          problem = call.refused.get() != null ? "" : messages == 1 ? first(message) : problem(message);
        } catch (RuntimeException e) {
          // a header that breaks the reading of it: never thrown to gRPC, which would end the call
          // without telling the handler, and then still deliver the client's half-close
          problem = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
        if (problem == null && message instanceof ArrowMessage m) {
          ArrowMessage.HeaderType type = m.getMessageType();
          if (!schema && (type == ArrowMessage.HeaderType.RECORD_BATCH || type == ArrowMessage.HeaderType.DICTIONARY_BATCH)) {
            problem = "a batch before the stream's schema";
          }
          schema |= type == ArrowMessage.HeaderType.SCHEMA;
        }
        if (problem == null) {
          call.deliver(message);
        } else {
          close(message);
          call.refuse(messages, problem);
        }
      }

      @Override
      public void onHalfClose() {
        if (call.received.get() > messages) {
          call.refuse(messages + 1, "it could not be parsed as Flight data");
        } else if (!schema) {
          // Flight's handler waits for the schema for good when a stream ends without one
          call.refuse(messages, "the stream ended before its schema");
        }
        call.halfClose();
      }

      @Override
      public void onCancel() {
        call.cancel();
      }

      @Override
      public void onComplete() {
        call.handler().onComplete();
      }

      @Override
      public void onReady() {
        call.handler().onReady();
      }
    };
  }

  /**
   * What is wrong with the first message of a stream, or null: it must name the stream's command
   * (Flight's server waits for a descriptor that never comes, holding a thread for good, when the
   * first message has none).
   */
  private static String first(Object message) {
    if (!(message instanceof ArrowMessage m)) {
      return null;
    }
    if (m.getDescriptor() == null) {
      return "the first message carries no FlightDescriptor";
    }
    ArrowMessage.HeaderType type = m.getMessageType();
    if (type != ArrowMessage.HeaderType.SCHEMA && type != ArrowMessage.HeaderType.NONE) {
      // Flight takes the descriptor from a schema or an empty message only
      return "the first message is a " + type + ", not a schema";
    }
    return problem(message);
  }

  /** What is wrong with {@code message}, or null when Flight can decode it safely. */
  private static String problem(Object message) {
    if (!(message instanceof ArrowMessage m)) {
      return null;
    }
    ArrowMessage.HeaderType type = m.getMessageType();
    if (type == ArrowMessage.HeaderType.SCHEMA) {
      // a schema Flight cannot take in fails inside gRPC's delivery, and the handler then waits for
      // the stream's columns forever: the same steps as Flight's stream, on an allocator of no bytes
      try (org.apache.arrow.memory.BufferAllocator none = new org.apache.arrow.memory.RootAllocator(0)) {
        org.apache.arrow.vector.types.pojo.Schema schema = m.asSchema();
        short version = m.asSchemaMessage().getMessage().version();
        if (org.apache.arrow.vector.types.MetadataVersion.fromFlatbufID(version) == null) {
          return "its metadata version " + version + " is none Arrow knows";
        }
        java.util.Map<Long, org.apache.arrow.vector.dictionary.Dictionary> dictionaries = new java.util.HashMap<>();
        java.util.List<org.apache.arrow.vector.types.pojo.Field> fields = new java.util.ArrayList<>();
        try {
          for (org.apache.arrow.vector.types.pojo.Field f : schema.getFields()) {
            fields.add(org.apache.arrow.vector.util.DictionaryUtility.toMemoryFormat(f, none, dictionaries));
          }
          org.apache.arrow.vector.VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields,
              schema.getCustomMetadata()), none).close();
        } finally {
          dictionaries.values().forEach(d -> d.getVector().close());
        }
        return null;
      } catch (RuntimeException e) {
        return "its schema cannot be read: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
      }
    }
    if (type != ArrowMessage.HeaderType.RECORD_BATCH && type != ArrowMessage.HeaderType.DICTIONARY_BATCH) {
      return null;
    }
    java.util.Iterator<ArrowBuf> bufs = m.getBufs().iterator();
    if (!bufs.hasNext()) {
      return "a batch without a body";
    }
    ArrowBuf body = bufs.next();
    // The body's buffer is larger than what the client sent (Arrow rounds an allocation up to a
    // power of two, and does not zero it): decoded against its capacity, a header could reach
    // past the sent bytes into whatever the server held there before. The check decodes against
    // the bytes written, as Flight's stream will next do on the same header, less its retain.
    if (body.writerIndex() < 0 || body.writerIndex() > body.capacity()) {
      return "a body of " + body.writerIndex() + " bytes";
    }
    String rows = rows(m, body.writerIndex());
    if (rows != null) {
      return rows;
    }
    ArrowBuf sent = body.slice(0, body.writerIndex());
    // decoding consumes one reference to the body when it succeeds; it is given back when it fails
    body.getReferenceManager().retain();
    try {
      if (type == ArrowMessage.HeaderType.RECORD_BATCH) {
        MessageSerializer.deserializeRecordBatch(m.asSchemaMessage(), sent).close();
      } else {
        MessageSerializer.deserializeDictionaryBatch(m.asSchemaMessage(), sent).close();
      }
      return null;
    } catch (RuntimeException | java.io.IOException e) {
      body.getReferenceManager().release();
      return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
  }

  /**
   * Whether the batch's row counts fit its body: every column but the null type holds at least a
   * bit a row, so more than 8 rows a byte sent is a lie, which Flight's loader would believe and
   * size its buffers for (gigabytes, and seconds of filling, for a few bytes sent).
   */
  private static String rows(ArrowMessage m, long bodyBytes) {
    org.apache.arrow.flatbuf.Message header = m.asSchemaMessage().getMessage();
    org.apache.arrow.flatbuf.RecordBatch batch;
    if (m.getMessageType() == ArrowMessage.HeaderType.RECORD_BATCH) {
      batch = (org.apache.arrow.flatbuf.RecordBatch) header.header(new org.apache.arrow.flatbuf.RecordBatch());
    } else {
      org.apache.arrow.flatbuf.DictionaryBatch d =
          (org.apache.arrow.flatbuf.DictionaryBatch) header.header(new org.apache.arrow.flatbuf.DictionaryBatch());
      batch = d == null ? null : d.data();
    }
    if (batch == null) {
      return "a batch without its header";
    }
    long most = 8 * bodyBytes + 64;
    if (batch.length() < 0 || batch.length() > most) {
      return "it declares " + batch.length() + " rows in " + bodyBytes + " bytes";
    }
    for (int i = 0; i < batch.nodesLength(); i++) {
      long length = batch.nodes(i).length();
      if (length < 0 || length > most) {
        return "its column node " + i + " declares " + length + " rows in " + bodyBytes + " bytes";
      }
    }
    return null;
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
