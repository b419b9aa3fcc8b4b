package dev.gpudf.sql.interop;

import dev.gpudf.columnar.error.NotSupportedException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The C half of {@link DeviceArrayStreams} ({@code src/main/native/device_array_stream.c}, built
 * by gcc into the classes as {@code native/<os.name>-<os.arch>/libgpudf_device_stream.so}): an
 * {@code ArrowDeviceArrayStream} is made of C function pointers, which Java 17 cannot make or call.
 * Loaded on first use; a build without it (no gcc where it was built) answers not supported.
 */
final class StreamNative {
  private static final String LIBRARY = "native/" + System.getProperty("os.name") + "-" + System.getProperty("os.arch")
      + "/libgpudf_device_stream.so";
  private static boolean loaded;

  private StreamNative() {}

  /** Loads the library once; a {@link NotSupportedException} naming it if this build or platform has none. */
  static synchronized void load() {
    if (loaded) {
      return;
    }
    try (InputStream in = StreamNative.class.getClassLoader().getResourceAsStream(LIBRARY)) {
      if (in == null) {
        throw new NotSupportedException("Arrow C Device streams need gpudf's native library " + LIBRARY
            + ", which this build does not have (gcc builds it with the sql module)");
      }
      // a library inside a jar cannot be loaded where it lies: a private copy, deleted when the JVM exits
      Path copy = Files.createTempFile("gpudf_device_stream", ".so");
      copy.toFile().deleteOnExit();
      Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
      System.load(copy.toString());
      loaded = true;
    } catch (IOException e) {
      throw new NotSupportedException("gpudf's native library " + LIBRARY + " cannot be unpacked: " + e.getMessage(), e);
    }
  }

  /** Fills the stream at {@code stream} with callbacks that call {@code source}; its release calls {@code source.close()}. */
  static native void export(long stream, int deviceType, DeviceArrayStreams.Source source);

  /** The producer's {@code get_schema}: 0 or an errno. */
  static native int getSchema(long stream, long schema);

  /** The producer's {@code get_next}: 0 or an errno. */
  static native int getNext(long stream, long deviceArray);

  /** The producer's {@code get_last_error}, as bytes (UTF-8, at most 4 KiB), or null. */
  static native byte[] lastError(long stream);

  /** The producer's {@code release}, unless the stream was released already. */
  static native void release(long stream);
}
