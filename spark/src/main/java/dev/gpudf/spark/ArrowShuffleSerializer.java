package dev.gpudf.spark;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.serializer.SerializerInstance;
import scala.Tuple2;
import scala.reflect.ClassTag;

/**
 * How a {@link GpudfShuffleExchangeExec}'s records go through Spark's shuffle files: each record is
 * a partition id (not written: Spark's writer has already placed the record in its partition's
 * file) and a batch as the bytes of an Arrow IPC stream, written as its length then its bytes. A
 * reader gets the bytes back (its keys are 0); a length that is negative or runs past the stream's
 * end is an error, never a short batch.
 */
final class ArrowShuffleSerializer extends Serializer implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  @Override
  public SerializerInstance newInstance() {
    return new Instance();
  }

  private static final class Instance extends SerializerInstance {
    @Override
    public <T> java.nio.ByteBuffer serialize(T t, ClassTag<T> tag) {
      throw new UnsupportedOperationException("gpudf's shuffle serializer writes streams only");
    }

    @Override
    public <T> T deserialize(java.nio.ByteBuffer bytes, ClassTag<T> tag) {
      throw new UnsupportedOperationException("gpudf's shuffle serializer reads streams only");
    }

    @Override
    public <T> T deserialize(java.nio.ByteBuffer bytes, ClassLoader loader, ClassTag<T> tag) {
      throw new UnsupportedOperationException("gpudf's shuffle serializer reads streams only");
    }

    @Override
    public SerializationStream serializeStream(OutputStream out) {
      return new Out(out);
    }

    @Override
    public DeserializationStream deserializeStream(InputStream in) {
      return new In(in);
    }
  }

  private static final class Out extends SerializationStream {
    private final DataOutputStream out;

    Out(OutputStream out) {
      this.out = new DataOutputStream(out);
    }

    /** Nothing: the record is in its partition's file already. */
    @Override
    public <T> SerializationStream writeKey(T key, ClassTag<T> tag) {
      return this;
    }

    @Override
    public <T> SerializationStream writeValue(T value, ClassTag<T> tag) {
      return writeObject(value, tag);
    }

    @Override
    public <T> SerializationStream writeObject(T value, ClassTag<T> tag) {
      if (!(value instanceof byte[] bytes)) {
        throw new dev.gpudf.columnar.error.InternalException("gpudf's shuffle writes batches' bytes, not "
            + (value == null ? "null" : value.getClass().getName()));
      }
      try {
        out.writeInt(bytes.length);
        out.write(bytes);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return this;
    }

    @Override
    public void flush() {
      try {
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void close() {
      try {
        out.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private static final class In extends DeserializationStream {
    private final DataInputStream in;

    In(InputStream in) {
      this.in = new DataInputStream(in);
    }

    /** The next record's bytes, or null at the stream's end. */
    private byte[] record() {
      int length;
      try {
        length = in.readInt();
      } catch (EOFException end) {
        return null;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (length < 0) {
        throw new dev.gpudf.columnar.error.InternalException("a shuffle record of " + length + " bytes");
      }
      byte[] bytes = new byte[length];
      try {
        in.readFully(bytes);
      } catch (EOFException e) {
        throw new dev.gpudf.columnar.error.InternalException("a shuffle record of " + length
            + " bytes ends early", e);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return bytes;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T readObject(ClassTag<T> tag) {
      byte[] bytes = record();
      if (bytes == null) {
        throw new java.util.NoSuchElementException("the shuffle stream has ended");
      }
      return (T) bytes;
    }

    @Override
    public scala.collection.Iterator<Object> asIterator() {
      return asKeyValueIterator().map(Tuple2::_2);
    }

    @Override
    public scala.collection.Iterator<Tuple2<Object, Object>> asKeyValueIterator() {
      return new scala.collection.AbstractIterator<>() {
        private byte[] ahead = record();

        @Override
        public boolean hasNext() {
          if (ahead == null) {
            close();
          }
          return ahead != null;
        }

        @Override
        public Tuple2<Object, Object> next() {
          if (ahead == null) {
            throw new java.util.NoSuchElementException();
          }
          Tuple2<Object, Object> r = new Tuple2<>(0, ahead);
          ahead = record();
          return r;
        }
      };
    }

    @Override
    public void close() {
      try {
        in.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
