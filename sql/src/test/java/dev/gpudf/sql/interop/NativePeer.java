package dev.gpudf.sql.interop;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/**
 * The native peer of {@link DeviceArraysTest} ({@code src/test/native/device_array_peer.c}, built
 * by {@code build-native.sh} into the test classes): a C consumer and producer of Arrow C
 * Device arrays and streams of them that reads and writes device memory through the CUDA driver itself.
 */
final class NativePeer {
  static {
    URL library = NativePeer.class.getResource("/native/libgpudf_device_array_peer.so");
    if (library == null) {
      throw new IllegalStateException("the native test peer was not built (build-native.sh needs gcc and the JDK's"
          + " JNI headers)");
    }
    try {
      System.load(Path.of(library.toURI()).toString());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private NativePeer() {}

  /** Reads the batch in the {@code ArrowDeviceArray} at {@code deviceArray} from the device, describes it, and releases it and {@code schema}. */
  static native String consume(long deviceArray, long schema);

  /** Fills the {@code ArrowDeviceArray} at {@code deviceArray} and the schema at {@code schema} with {@code rows} rows in memory of its own; 0, or -1 without a driver. */
  static native int produce(long rows, long deviceArray, long schema);

  /** Reads every batch of the {@code ArrowDeviceArrayStream} at {@code stream} as {@link #consume} reads one, joined by " || ", then releases it. */
  static native String consumeStream(long stream);

  /** Fills the stream at {@code stream}: {@code batches} batches as {@link #produce} makes them, batch {@code failAt} (from 1; 0 none) failing; 0, or -1 without a driver. */
  static native int produceStream(long rows, int batches, int failAt, long stream);

  /** Streams {@link #produceStream} made that were not released yet. */
  static native int streamsLive();

  /** Device bytes the producer holds: 0 once every batch it made was released. */
  static native long producedBytesLive();
}
