package dev.gpudf.sql.interop;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Streams of device tables through the Arrow C Device Data Interface's {@code
 * ArrowDeviceArrayStream}, both ways: batches gpudf makes handed to another library in this
 * process one {@code get_next} at a time, and another library's stream read as device tables.
 * Each batch travels as {@link DeviceArrays} moves one ({@code ArrowDeviceArray}: no copy, the
 * same checks on import); the stream's callbacks are C ({@link StreamNative}).
 *
 * <p>The stream struct is 48 bytes: {@code int32 device_type}, then {@code get_schema}, {@code
 * get_next}, {@code get_last_error}, {@code release} and {@code private_data}, as the
 * specification lays it out. A callback answers 0 or an errno: {@code EINVAL} for a user error
 * (a batch that does not fit the stream's schema, say), {@code EIO} otherwise, with the message
 * in {@code get_last_error}.
 */
public final class DeviceArrayStreams {
  /** Bytes of an {@code ArrowDeviceArrayStream}. */
  public static final int STREAM_BYTES = 48;
  private static final int STREAM_RELEASE = 32;
  // the ArrowArray's release callback inside an ArrowDeviceArray, null at the end of a stream
  private static final int ARRAY_RELEASE = 64;
  private static final int EINVAL = 22;
  private static final int EIO = 5;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DeviceArrayStreams.class);

  private DeviceArrayStreams() {}

  /**
   * Fills the {@code ArrowDeviceArrayStream} at {@code stream} (48 bytes the caller provides) with
   * a stream of CUDA batches of columns {@code names} of {@code types}: each {@code get_next}
   * takes the next table of {@code batches} (which the stream closes once exported: the batch
   * holds its own reference) until there is none. The consumer's {@code release} ends the stream
   * and closes {@code batches} if it is {@link AutoCloseable}. Host structs come from {@code
   * allocator}, which must outlive the stream.
   */
  public static void exportStream(List<String> names, List<DataType> types, Iterator<DeviceTable> batches,
      BufferAllocator allocator, long stream) {
    if (names.size() != types.size()) {
      throw new IllegalArgumentException(names.size() + " names for " + types.size() + " types");
    }
    StreamNative.load();
    StreamNative.export(stream, DeviceArrays.ARROW_DEVICE_CUDA, new Source(List.copyOf(names), List.copyOf(types), batches,
        allocator));
  }

  /**
   * A reader of the {@code ArrowDeviceArrayStream} at {@code stream}, another library's, whose
   * batches become tables on {@code exec}'s GPU. The stream is moved into the reader (the struct
   * at {@code stream} is marked released and may be freed); closing the reader releases it.
   */
  public static Reader importStream(Exec exec, long stream) {
    StreamNative.load();
    if (MemoryUtil.getLong(stream + STREAM_RELEASE) == 0) {
      throw new UserException("an imported device array stream was released already");
    }
    Reader reader = new Reader(exec, stream);
    int deviceType = MemoryUtil.getInt(reader.address());
    if (deviceType != DeviceArrays.ARROW_DEVICE_CUDA) {
      reader.close();
      throw new NotSupportedException("an imported device array stream of device type " + deviceType + ": gpudf takes"
          + " CUDA device memory (" + DeviceArrays.ARROW_DEVICE_CUDA + ")");
    }
    return reader;
  }

  /** Another library's stream of device batches, read one table at a time; not thread-safe; the caller closes it. */
  public static final class Reader implements AutoCloseable {
    private final Exec exec;
    private final ArrowBuf moved;
    private Field struct;
    private boolean ended;
    private boolean closed;
    private int batches;

    private Reader(Exec exec, long stream) {
      this.exec = exec;
      moved = exec.allocator().buffer(STREAM_BYTES);
      MemoryUtil.copyMemory(stream, moved.memoryAddress(), STREAM_BYTES);
      MemoryUtil.putLong(stream + STREAM_RELEASE, 0);
    }

    private long address() {
      return moved.memoryAddress();
    }

    /** The stream's schema (a record batch: a struct of the columns), asked of the producer once. */
    public Field schema() {
      checkOpen();
      if (struct == null) {
        try (ArrowSchema schema = ArrowSchema.allocateNew(exec.allocator())) {
          check(StreamNative.getSchema(address(), schema.memoryAddress()), "get_schema");
          struct = DeviceArrays.importField(exec.allocator(), schema);
        }
      }
      return struct;
    }

    /** The next batch as a device table over the producer's memory (the caller closes it), or null at the end. */
    public DeviceTable next() {
      checkOpen();
      if (ended) {
        return null;
      }
      Field s = schema();
      ArrowBuf array = exec.allocator().buffer(DeviceArrays.DEVICE_ARRAY_BYTES);
      try {
        array.setZero(0, DeviceArrays.DEVICE_ARRAY_BYTES);
        check(StreamNative.getNext(address(), array.memoryAddress()), "get_next (batch " + (batches + 1) + ")");
        if (array.getLong(ARRAY_RELEASE) == 0) {
          ended = true;
          return null;
        }
        batches++;
        return DeviceArrays.importTable(exec, array.memoryAddress(), s);
      } finally {
        array.close();
      }
    }

    private void check(int rc, String call) {
      if (rc != 0) {
        byte[] error = StreamNative.lastError(address());
        throw new UserException("an imported device array stream's " + call + " failed (errno " + rc + ")"
            + (error == null ? "" : ": " + new String(error, StandardCharsets.UTF_8)));
      }
    }

    private void checkOpen() {
      if (closed) {
        throw new IllegalStateException("the device array stream reader is closed");
      }
    }

    /** Releases the stream to its producer; tables already read stay valid until closed. */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      try {
        StreamNative.release(address());
      } finally {
        moved.close();
      }
    }
  }

  /**
   * The Java side of an exported stream, called by its C callbacks ({@code device_array_stream.c}):
   * each call answers 0 or an errno and keeps the message, as no exception may cross into C.
   */
  static final class Source {
    private final List<String> names;
    private final List<DataType> types;
    private final Iterator<DeviceTable> batches;
    private final BufferAllocator allocator;
    private String error;
    private int exported;
    private boolean closed;

    Source(List<String> names, List<DataType> types, Iterator<DeviceTable> batches, BufferAllocator allocator) {
      this.names = names;
      this.types = types;
      this.batches = batches;
      this.allocator = allocator;
    }

    int schema(long address) {
      try {
        DeviceArrays.exportSchema(names, types, allocator, ArrowSchema.wrap(address));
        return 0;
      } catch (Throwable t) {
        return failed(t);
      }
    }

    int next(long address) {
      try {
        if (closed || !batches.hasNext()) {
          MemoryUtil.setMemory(address, DeviceArrays.DEVICE_ARRAY_BYTES, (byte) 0);
          return 0;
        }
        try (DeviceTable t = batches.next()) {
          exported++;
          if (!t.types().equals(types) || !t.names().equals(names)) {
            throw new UserException("batch " + exported + " of the stream has columns " + t.names() + " of " + t.types()
                + ", not the stream's " + names + " of " + types);
          }
          DeviceArrays.exportArray(t, allocator, address);
        }
        return 0;
      } catch (Throwable t) {
        return failed(t);
      }
    }

    String error() {
      return error;
    }

    void close() {
      closed = true;
      if (batches instanceof AutoCloseable c) {
        try {
          c.close();
        } catch (Exception e) {
          // a release cannot fail in C: the log is the only place left to say so
          LOG.warn("closing the batches of an exported device array stream failed", e);
        }
      }
    }

    private int failed(Throwable t) {
      error = t.getMessage() == null ? t.toString() : t.getMessage();
      return t instanceof UserException || t instanceof NotSupportedException ? EINVAL : EIO;
    }
  }
}
