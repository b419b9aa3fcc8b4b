package dev.gpudf.formats;

import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.apache.arrow.memory.ArrowBuf;

/**
 * Byte ranges of a file read into a buffer by several threads at once: one thread copies a file
 * from the page cache at a few GB/s, less than the PCIe link and the device decoder take, and one
 * column often holds most of a chunk's bytes (TPC-H q6: l_extendedprice is 64% of what it reads).
 * Positional reads on one channel, each into its own part of the buffer.
 */
final class RangeReads {
  /** Bytes of a file ({@code at}, {@code length}) that go to {@code into} of the buffer; {@code part} names it in errors. */
  record Range(long at, long into, long length, int part) {}

  /** A piece a thread reads at once: ranges are cut so that the threads share a large one. */
  static final long PIECE = 4L << 20;
  /** Below this many bytes the caller's thread reads alone. */
  static final long ALONE = 8L << 20;

  private RangeReads() {}

  /** The threads: daemons, made when first used, at most 8. */
  private static final class Pool {
    static final ExecutorService THREADS = Executors.newFixedThreadPool(
        Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors())), r -> {
          Thread t = new Thread(r, "gpudf-range-reader");
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * Reads {@code ranges} of {@code channel} into {@code buf}; every read has ended when this
   * returns. A range that runs past the file's end is a {@link UserException} from {@code ended}
   * (given the range's part); the first failure is thrown.
   */
  static void read(FileChannel channel, ArrowBuf buf, List<Range> ranges, IntFunction<UserException> ended)
      throws IOException {
    List<Range> pieces = new ArrayList<>();
    long total = 0;
    for (Range r : ranges) {
      if (r.into() < 0 || r.length() < 0 || r.into() + r.length() > buf.capacity()) {
        throw new InternalException("a range of " + r.length() + " bytes at " + r.into() + " is outside a buffer of "
            + buf.capacity());
      }
      for (long off = 0; off < r.length(); off += PIECE) {
        long n = Math.min(PIECE, r.length() - off);
        pieces.add(new Range(r.at() + off, r.into() + off, n, r.part()));
      }
      total += r.length();
    }
    if (total < ALONE || pieces.size() < 2) {
      for (Range p : pieces) {
        readOne(channel, buf, p, ended);
      }
      return;
    }
    List<Future<Object>> reads = new ArrayList<>();
    for (Range p : pieces) {
      reads.add(Pool.THREADS.submit(() -> {
        try {
          readOne(channel, buf, p, ended);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        return null;
      }));
    }
    try {
      Await.all(reads, "reading a file", (nothing, i) -> { });
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  private static void readOne(FileChannel channel, ArrowBuf buf, Range r, IntFunction<UserException> ended)
      throws IOException {
    ByteBuffer to = buf.nioBuffer(r.into(), Math.toIntExact(r.length()));
    while (to.hasRemaining()) {
      if (channel.read(to, r.at() + to.position()) < 0) {
        throw ended.apply(r.part());
      }
    }
  }
}
