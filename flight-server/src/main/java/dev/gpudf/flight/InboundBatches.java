package dev.gpudf.flight;

import dev.gpudf.columnar.ArrowDictionaries;
import dev.gpudf.columnar.ArrowInput;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * The batches of a client's DoPut (rows to ingest, a JDBC batch of parameters) gathered into one
 * root: each checked first ({@link ArrowInput}), its dictionary-encoded columns decoded (a table
 * and a parameter hold values, not codes), and copied (a host table shares the buffers it is made
 * from, and the stream reuses its own). Nothing is used until the whole stream has arrived, so a
 * statement whose 4th batch is malformed changes nothing.
 */
final class InboundBatches {
  private InboundBatches() {}

  /**
   * Every batch of {@code stream} in one root from {@code allocator}, or a root of the stream's
   * (decoded) schema and no rows when none came; {@code source} names the input in errors. The
   * caller closes it.
   */
  static VectorSchemaRoot gather(FlightStream stream, BufferAllocator allocator, String source) {
    ArrowInput.checkSchema(stream.getSchema(), source);
    boolean encoded = ArrowDictionaries.encoded(stream.getSchema());
    VectorSchemaRoot all = null;
    try {
      for (long b = 1; next(stream, source + ", batch " + b); b++) {
        ArrowInput.check(stream.getRoot(), stream.getDictionaryProvider(), source + ", batch " + b);
        try (VectorSchemaRoot decoded = encoded ? ArrowDictionaries.decode(stream.getRoot(), stream.getDictionaryProvider(),
            allocator) : null) {
          VectorSchemaRoot in = decoded == null ? stream.getRoot() : decoded;
          if (all == null) {
            all = VectorSchemaRoot.create(in.getSchema(), allocator);
            all.allocateNew();
          }
          VectorSchemaRootAppender.append(all, in);
        }
      }
      if (all == null) {
        all = VectorSchemaRoot.create(encoded ? ArrowDictionaries.decoded(stream.getSchema(), stream.getDictionaryProvider())
            : stream.getSchema(), allocator);
        all.setRowCount(0);
      }
      return all;
    } catch (RuntimeException e) {
      if (all != null) {
        all.close();
      }
      throw e;
    }
  }

  /**
   * {@link FlightStream#next}, whose failures to decode what the client sent (a metadata version
   * that changes mid-stream, a batch before its schema) are the client's error, not the server's;
   * a Flight status (the client cancelled) stays as it is.
   */
  private static boolean next(FlightStream stream, String where) {
    try {
      return stream.next();
    } catch (org.apache.arrow.flight.FlightRuntimeException e) {
      throw e;
    } catch (IllegalStateException | IllegalArgumentException | IndexOutOfBoundsException | UnsupportedOperationException e) {
      throw new dev.gpudf.columnar.error.UserException(where + ": the stream is malformed: " + e.getMessage(), e);
    } catch (AssertionError e) {
      // with -ea, Arrow's loader asserts what its bounds checks refuse otherwise: buffers too small for the rows
      throw new dev.gpudf.columnar.error.UserException(where + ": the stream is malformed: its buffers do not hold its rows", e);
    }
  }
}
