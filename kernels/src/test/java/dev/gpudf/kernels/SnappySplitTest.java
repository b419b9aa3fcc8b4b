package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * The host's walk over a Snappy block for its fragments' starts ({@link SnappySplit}): Google's
 * blocks (snappy-java's) of edge sizes around the 64 KiB fragment and of several kinds of data
 * split, and each fragment, decoded alone from its start by a plain decoder written from the
 * format, gives that fragment of snappy-java's output; blocks whose elements cross a fragment's
 * end or copy from before its start do not split; damaged blocks never read outside the block, and
 * where they split, each fragment decodes alone to its length. The device's walk, its twin, is
 * held to the same in {@code ParquetDecodeTest} on a GPU.
 */
class SnappySplitTest {
  private static final int F = SnappySplit.FRAGMENT;
  private static final int[] SIZES = {0, 1, F - 1, F, F + 1, 2 * F, 2 * F + 1, 1_000_003};

  /** Data of a kind: random bytes (literals), text (long copies), sorted little-endian longs (a Parquet column). */
  private static byte[] data(String kind, int size, Random r) {
    byte[] b = new byte[size];
    switch (kind) {
      case "random" -> r.nextBytes(b);
      case "text" -> {
        String[] words = {"carefully ", "final ", "deposits ", "Grüße ", "東京 ", "sleep ", "quickly "};
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (out.size() < size) {
          out.writeBytes(words[r.nextInt(words.length)].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        System.arraycopy(out.toByteArray(), 0, b, 0, size);
      }
      default -> {
        long v = 1_000_000;
        for (int i = 0; i + 8 <= size; i += 8) {
          v += r.nextInt(3);
          for (int k = 0; k < 8; k++) {
            b[i + k] = (byte) (v >>> (8 * k));
          }
        }
      }
    }
    return b;
  }

  private static int fragments(int outLen) {
    return Math.max(1, (outLen + F - 1) / F);
  }

  /** Runs the walk over {@code block}; the starts, or null where it does not split. */
  private static int[] split(RootAllocator a, byte[] block, int outLen) {
    // the block in the middle of a buffer, so that a read outside it is a read of other bytes
    try (ArrowBuf buf = a.buffer(block.length + 32)) {
      buf.setBytes(16, block);
      int[] starts = new int[fragments(outLen) + 2];
      starts[0] = -7;
      starts[starts.length - 1] = -7;
      boolean split = SnappySplit.split(buf, 16, block.length, outLen, starts, 1, fragments(outLen));
      assertEquals(-7, starts[0], "nothing written before the starts");
      assertEquals(-7, starts[starts.length - 1], "nothing written after the starts");
      return split ? java.util.Arrays.copyOfRange(starts, 1, starts.length - 1) : null;
    }
  }

  /**
   * Decodes the elements of {@code in[from, to)} alone into {@code out[at, at + len)}, a copy
   * reaching only bytes of this fragment: the format read plainly, an element at a time.
   */
  private static void decodeAlone(byte[] in, int from, int to, byte[] out, int at, int len, String what) {
    int q = from;
    int o = 0;
    while (q < to) {
      int b0 = in[q] & 0xff;
      int type = b0 & 3;
      if (type == 0) {
        int n = (b0 >>> 2) + 1;
        int head = 1;
        if (n > 60) {
          int extra = n - 60;
          long v = 0;
          for (int i = 0; i < extra; i++) {
            v |= (long) (in[q + 1 + i] & 0xff) << (8 * i);
          }
          n = (int) v + 1;
          head += extra;
        }
        assertTrue(o + n <= len && q + head + n <= to, what + ": a literal runs past its fragment");
        System.arraycopy(in, q + head, out, at + o, n);
        o += n;
        q += head + n;
      } else {
        int n;
        int offset;
        int head;
        if (type == 1) {
          n = 4 + ((b0 >>> 2) & 7);
          offset = ((b0 >>> 5) << 8) | (in[q + 1] & 0xff);
          head = 2;
        } else {
          n = (b0 >>> 2) + 1;
          head = type == 2 ? 3 : 5;
          long v = 0;
          for (int i = 0; i < head - 1; i++) {
            v |= (long) (in[q + 1 + i] & 0xff) << (8 * i);
          }
          offset = (int) Math.min(v, Integer.MAX_VALUE);
        }
        assertTrue(offset > 0 && offset <= o && o + n <= len, what + ": a copy reaches outside its fragment");
        for (int i = 0; i < n; i++) {
          out[at + o + i] = out[at + o + i - offset];
        }
        o += n;
        q += head;
      }
    }
    assertEquals(len, o, what + ": the fragment's length");
  }

  /** Each fragment of {@code block}, split at {@code starts}, decoded alone; the whole output. */
  private static byte[] decodeFragments(byte[] block, int[] starts, int outLen, String what) {
    byte[] out = new byte[outLen];
    for (int k = 0; k < starts.length; k++) {
      int end = k + 1 < starts.length ? starts[k + 1] : block.length;
      assertTrue(starts[k] <= end, what + ": fragment " + k + "'s start is past the next one's");
      decodeAlone(block, starts[k], end, out, k * F, Math.min(F, outLen - k * F), what + " fragment " + k);
    }
    return out;
  }

  @Test
  void googlesBlocksSplitAndEachFragmentDecodesAlone() throws IOException {
    Random r = new Random(7);
    int multi = 0;
    try (RootAllocator a = new RootAllocator()) {
      for (String kind : new String[] {"random", "text", "longs"}) {
        for (int size : SIZES) {
          byte[] raw = data(kind, size, r);
          byte[] block = Snappy.compress(raw);
          String what = kind + " of " + size + " bytes";
          int[] starts = split(a, block, size);
          assertTrue(starts != null, what + ": a block of Google's Snappy splits");
          assertArrayEquals(raw, decodeFragments(block, starts, size, what), what);
          multi += starts.length > 1 ? 1 : 0;
        }
      }
      assertTrue(multi >= 12, multi + " blocks of several fragments");
    }
  }

  /** A block of {@code outLen} bytes: the preamble, then {@code elements} as written. */
  private static byte[] block(int outLen, byte[]... elements) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (long v = outLen; ; v >>>= 7) {
      if (v < 0x80) {
        out.write((int) v);
        break;
      }
      out.write((int) (v & 0x7f) | 0x80);
    }
    for (byte[] e : elements) {
      out.writeBytes(e);
    }
    return out.toByteArray();
  }

  /** A literal of {@code n} bytes of {@code fill} (its length in 3 extra bytes: a 4-byte header). */
  private static byte[] literal(int n, int fill) {
    byte[] e = new byte[4 + n];
    e[0] = (byte) (62 << 2);
    e[1] = (byte) (n - 1);
    e[2] = (byte) ((n - 1) >>> 8);
    e[3] = (byte) ((n - 1) >>> 16);
    java.util.Arrays.fill(e, 4, e.length, (byte) fill);
    return e;
  }

  /** A copy of {@code n} (1..64) bytes from {@code offset} back (a 2-byte offset). */
  private static byte[] copy(int n, int offset) {
    return new byte[] {(byte) (((n - 1) << 2) | 2), (byte) offset, (byte) (offset >>> 8)};
  }

  @Test
  void blocksWhoseElementsCrossAFragmentDoNotSplit() {
    try (RootAllocator a = new RootAllocator()) {
      // two literals, one fragment each: it splits, at the second (after a 3-byte preamble)
      int[] starts = split(a, block(2 * F, literal(F, 1), literal(F, 2)), 2 * F);
      assertArrayEquals(new int[] {3, 3 + 4 + F}, starts);
      // one literal over both fragments
      assertEquals(null, split(a, block(2 * F, literal(F + 10, 1), literal(F - 10, 2)), 2 * F));
      // a copy over the fragment's end
      assertEquals(null, split(a, block(2 * F, literal(F - 4, 1), copy(8, 16), literal(F - 4, 2)), 2 * F));
      // a copy from the fragment before
      assertEquals(null, split(a, block(2 * F, literal(F, 1), copy(8, 16), literal(F - 8, 2)), 2 * F));
      // the same copy from inside its own fragment splits
      assertArrayEquals(new int[] {3, 3 + 4 + F},
          split(a, block(2 * F, literal(F, 1), literal(16, 2), copy(8, 16), literal(F - 24, 3)), 2 * F));
      // a block that declares another size, or makes fewer or more bytes than it declares
      assertEquals(null, split(a, block(2 * F + 1, literal(F, 1), literal(F, 2)), 2 * F));
      assertEquals(null, split(a, block(2 * F, literal(F, 1), literal(F - 1, 2)), 2 * F));
      assertEquals(null, split(a, block(2 * F, literal(F, 1), literal(F, 2), literal(1, 3)), 2 * F));
      // a block cut short inside its last literal, or inside an element's header
      byte[] whole = block(2 * F, literal(F, 1), literal(F, 2));
      assertEquals(null, split(a, java.util.Arrays.copyOf(whole, whole.length - 1), 2 * F));
      assertEquals(null, split(a, java.util.Arrays.copyOf(whole, 3 + 4 + F + 2), 2 * F));
      // a copy of offset 0
      assertEquals(null, split(a, block(2 * F, literal(F, 1), literal(16, 2), copy(8, 0), literal(F - 24, 3)), 2 * F));
    }
  }

  @Test
  void damagedBlocksReadNothingOutsideAndSplitOnlyIntoFragmentsThatDecodeAlone() throws IOException {
    Random r = new Random(13);
    int refused = 0;
    int split = 0;
    try (RootAllocator a = new RootAllocator()) {
      byte[][] good = {Snappy.compress(data("text", 3 * F + 77, r)), Snappy.compress(data("longs", 2 * F + 8, r)),
          Snappy.compress(data("random", 2 * F + 3, r))};
      int[] sizes = {3 * F + 77, 2 * F + 8, 2 * F + 3};
      for (int round = 0; round < 3000; round++) {
        int which = r.nextInt(good.length);
        byte[] b = good[which].clone();
        switch (r.nextInt(3)) {
          case 0 -> {
            for (int k = 1 + r.nextInt(3); k > 0; k--) {
              b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
            }
          }
          case 1 -> b = java.util.Arrays.copyOf(b, r.nextInt(b.length));
          default -> b[r.nextInt(b.length)] = (byte) new int[] {0, 0xff, 0xfc, 0xfe, 0x03}[r.nextInt(5)];
        }
        int[] starts = split(a, b, sizes[which]);
        if (starts == null) {
          refused++;
        } else {
          split++;
          decodeFragments(b, starts, sizes[which], "round " + round);
        }
      }
    }
    assertTrue(refused > 300 && split > 300, refused + " refused, " + split + " split");
  }

  @Test
  void aBlockSaidToLieOutsideItsBufferIsNotRead() {
    try (RootAllocator a = new RootAllocator(); ArrowBuf buf = a.buffer(64)) {
      buf.setZero(0, 64);
      int[] starts = new int[2];
      assertFalse(SnappySplit.split(buf, 32, 33, 2 * F, starts, 0, 2));
      assertFalse(SnappySplit.split(buf, -1, 8, 2 * F, starts, 0, 2));
      assertFalse(SnappySplit.split(buf, 0, Integer.MAX_VALUE, 2 * F, starts, 0, 2));
    }
  }

  @Test
  void aBlockOfOneFragmentIsItsOwnStart() {
    try (RootAllocator a = new RootAllocator()) {
      assertArrayEquals(new int[] {1}, split(a, block(10, literal(10, 4)), 10));
      assertFalse(split(a, new byte[0], 0) != null, "an empty block has no preamble");
    }
  }
}
