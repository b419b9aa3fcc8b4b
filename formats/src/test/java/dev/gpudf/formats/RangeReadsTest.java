package dev.gpudf.formats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.error.UserException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RangeReads}: ranges of a file land where they are asked to, read by one thread when small
 * and cut into pieces for several when large (ranges shorter and longer than a piece, out of file
 * order); a range past the file's end is the caller's error naming it, and the buffer is whole.
 */
class RangeReadsTest {
  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    new java.util.Random(7).nextBytes(b);
    return b;
  }

  private static void readAndCompare(Path file, byte[] data, List<RangeReads.Range> ranges) throws Exception {
    long total = ranges.stream().mapToLong(RangeReads.Range::length).sum();
    try (RootAllocator a = new RootAllocator(); ArrowBuf buf = a.buffer(total);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      RangeReads.read(ch, buf, ranges, part -> new UserException("part " + part));
      for (RangeReads.Range r : ranges) {
        byte[] got = new byte[(int) r.length()];
        buf.getBytes(r.into(), got);
        assertArrayEquals(java.util.Arrays.copyOfRange(data, (int) r.at(), (int) (r.at() + r.length())), got,
            "range " + r);
      }
    }
  }

  @Test
  void rangesLandWhereAsked(@TempDir Path dir) throws Exception {
    int size = (int) (3 * RangeReads.ALONE);
    byte[] data = bytes(size);
    Path file = dir.resolve("data.bin");
    Files.write(file, data);
    // large: pieces on several threads; the ranges' file order differs from their buffer order
    List<RangeReads.Range> large = new ArrayList<>();
    long into = 0;
    long[][] spans = {{size - RangeReads.PIECE * 2 - 5, RangeReads.PIECE * 2 + 5}, {0, 1}, {17, RangeReads.PIECE - 1},
        {RangeReads.PIECE + 3, RangeReads.PIECE * 3}, {RangeReads.PIECE, 0}};
    for (int i = 0; i < spans.length; i++) {
      large.add(new RangeReads.Range(spans[i][0], into, spans[i][1], i));
      into += spans[i][1];
    }
    readAndCompare(file, data, large);
    // small: the caller's thread alone
    readAndCompare(file, data, List.of(new RangeReads.Range(100, 0, 1000, 0), new RangeReads.Range(5, 1000, 50, 1)));
  }

  @Test
  void aRangePastTheEndIsTheCallersErrorNamingIt(@TempDir Path dir) throws Exception {
    int size = (int) (2 * RangeReads.ALONE);
    Path file = dir.resolve("short.bin");
    Files.write(file, bytes(size));
    for (long length : new long[] {100, RangeReads.ALONE + 100}) {
      List<RangeReads.Range> ranges = List.of(new RangeReads.Range(0, 0, RangeReads.ALONE, 0),
          new RangeReads.Range(size - 50, RangeReads.ALONE, length, 1));
      try (RootAllocator a = new RootAllocator(); ArrowBuf buf = a.buffer(RangeReads.ALONE + length);
          FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        UserException e = assertThrows(UserException.class,
            () -> RangeReads.read(ch, buf, ranges, part -> new UserException("part " + part)));
        assertEquals("part 1", e.getMessage());
      }
    }
  }
}
