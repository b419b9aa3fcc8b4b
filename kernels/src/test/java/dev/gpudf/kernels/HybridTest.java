package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Parquet's RLE / bit-packed hybrid decoder ({@link ParquetDecode.Hybrid}) against runs written
 * here bit by bit: every width from 0 to 32, bit-packed runs of whole and partial groups, RLE runs
 * between them, and pages that end right after the last run (no bytes past it to read ahead) or
 * with bytes after it.
 */
class HybridTest {
  /** Writes {@code v} as an unsigned LEB128. */
  private static void uleb(ByteArrayOutputStream out, long v) {
    while (v >= 0x80) {
      out.write((int) (v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write((int) v);
  }

  /** A bit-packed run of {@code values} (a multiple of 8 of them), {@code w} bits each, least significant bit first. */
  private static void packed(ByteArrayOutputStream out, int[] values, int w) {
    uleb(out, (long) values.length / 8 << 1 | 1);
    byte[] bytes = new byte[values.length * w / 8];
    for (int k = 0; k < values.length; k++) {
      for (int bit = 0; bit < w; bit++) {
        if ((values[k] >>> bit & 1) != 0) {
          int at = k * w + bit;
          bytes[at / 8] |= (byte) (1 << at % 8);
        }
      }
    }
    out.writeBytes(bytes);
  }

  /** An RLE run of {@code count} copies of {@code value}, in the width's whole bytes. */
  private static void repeated(ByteArrayOutputStream out, int value, int count, int w) {
    uleb(out, (long) count << 1);
    for (int q = 0; q < (w + 7) / 8; q++) {
      out.write(value >>> 8 * q & 0xff);
    }
  }

  @Test
  void decodesWhatWasWrittenAtEveryWidth() {
    SplittableRandom random = new SplittableRandom(42);
    for (int w = 0; w <= 32; w++) {
      long limit = 1L << w;
      for (int shape = 0; shape < 6; shape++) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int[] want = new int[4096];
        int n = 0;
        for (int run = 0; run < 1 + shape * 3; run++) {
          if ((run + shape) % 3 == 2) {
            int count = 1 + random.nextInt(40);
            int value = (int) random.nextLong(limit);
            repeated(out, value, count, w);
            Arrays.fill(want, n, n + count, value);
            n += count;
          } else {
            int[] values = new int[8 * (1 + random.nextInt(shape == 0 ? 1 : 20))];
            for (int k = 0; k < values.length; k++) {
              values[k] = (int) random.nextLong(limit);
            }
            packed(out, values, w);
            System.arraycopy(values, 0, want, n, values.length);
            n += values.length;
          }
        }
        byte[] page = out.toByteArray();
        // fewer values than written (the last bit-packed group partly taken), and all of them
        for (int take : new int[] {n, Math.max(0, n - 3), 1}) {
          for (int slack : new int[] {0, 16}) {
            byte[] b = Arrays.copyOf(page, page.length + slack);
            int[] got = new int[take];
            String where = "width " + w + ", shape " + shape + ", " + take + " of " + n + " values, " + slack + " bytes after";
            assertTrue(ParquetDecode.Hybrid.decode(b, 0, page.length, w, got, take), where);
            assertArrayEquals(Arrays.copyOf(want, take), got, where);
          }
        }
        if (page.length > 1 && w > 0) {
          // a page cut short of its last run's bytes is refused, not read past
          assertFalse(ParquetDecode.Hybrid.decode(Arrays.copyOf(page, page.length + 16), 0, page.length - 1, w,
              new int[n], n), "width " + w + ", shape " + shape + ", cut short");
        }
      }
    }
  }
}
