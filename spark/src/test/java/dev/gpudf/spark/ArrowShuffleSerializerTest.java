package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.InternalException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.junit.jupiter.api.Test;
import scala.Tuple2;
import scala.reflect.ClassTag$;

/** {@link ArrowShuffleSerializer}: records read back as written, and a damaged stream is an error, never a short record. */
class ArrowShuffleSerializerTest {
  private static final SerializerInstance SERIALIZER = new ArrowShuffleSerializer().newInstance();

  private static byte[] written(byte[]... records) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SerializationStream s = SERIALIZER.serializeStream(out);
    for (byte[] r : records) {
      s.writeKey(7, ClassTag$.MODULE$.apply(Object.class));
      s.writeValue(r, ClassTag$.MODULE$.apply(byte[].class));
    }
    s.close();
    return out.toByteArray();
  }

  private static scala.collection.Iterator<Tuple2<Object, Object>> read(byte[] stream) {
    return SERIALIZER.deserializeStream(new ByteArrayInputStream(stream)).asKeyValueIterator();
  }

  @Test
  void recordsComeBackInOrder() {
    byte[] empty = new byte[0];
    byte[] some = "gpudf ü".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] big = new byte[100_000];
    Arrays.fill(big, (byte) 3);
    scala.collection.Iterator<Tuple2<Object, Object>> it = read(written(some, empty, big));
    for (byte[] want : new byte[][] {some, empty, big}) {
      assertTrue(it.hasNext());
      assertArrayEquals(want, (byte[]) it.next()._2());
    }
    assertFalse(it.hasNext());
    assertFalse(read(new byte[0]).hasNext(), "an empty stream holds no record");
  }

  @Test
  void aDamagedStreamIsAnError() {
    byte[] stream = written(new byte[] {1, 2, 3, 4, 5});
    InternalException cut = assertThrows(InternalException.class, () -> read(Arrays.copyOf(stream, stream.length - 1)));
    assertTrue(cut.getMessage().contains("of 5 bytes ends early"), cut.getMessage());
    byte[] negative = stream.clone();
    negative[0] = (byte) 0x80;
    InternalException e = assertThrows(InternalException.class, () -> read(negative));
    assertTrue(e.getMessage().contains("a shuffle record of -"), e.getMessage());
  }

  @Test
  void onlyBytesAreWritten() {
    SerializationStream s = SERIALIZER.serializeStream(new ByteArrayOutputStream());
    InternalException e = assertThrows(InternalException.class,
        () -> s.writeValue("rows", ClassTag$.MODULE$.apply(String.class)));
    assertTrue(e.getMessage().contains("java.lang.String"), e.getMessage());
    assertThrows(UnsupportedOperationException.class, () -> SERIALIZER.serialize(1, ClassTag$.MODULE$.apply(Object.class)));
  }
}
