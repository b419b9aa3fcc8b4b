package dev.gpudf.sql.files;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.Bytes;
import dev.gpudf.sql.FileTables;
import java.io.ByteArrayOutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged Arrow IPC files (truncated, bits flipped, lengths and offsets overwritten with edge
 * values, ranges cut or repeated) read through both paths a file takes into gpudf: read whole
 * ({@code gpudf load}, {@code serve}, dictionary-encoded tables) and opened lazily and read chunk
 * by chunk (file tables). Each read either fails with a {@link UserException} or gives a batch that passes
 * Arrow's full validation, whose strings all occur in the input (no byte from outside it); never a
 * crash, another exception, or a leak (the allocator is closed at the end). The seed is printed,
 * and a fresh one is used each run besides the fixed ones.
 */
class ArrowFileFuzzTest {
  private static final int INPUTS = Integer.getInteger("gpudf.fuzz.ipcInputs", 10_000);
  private static final long MAX_SECONDS = Long.getLong("gpudf.fuzz.ipcSeconds", 120);

  @TempDir
  Path dir;

  @Test
  void damagedArrowInputFailsCleanly() throws Exception {
    long fresh = System.nanoTime();
    System.out.println("ArrowFileFuzzTest seeds: 1, 2, " + fresh + " (rerun one with -Dgpudf.fuzz.ipcSeed=N)");
    long[] seeds = Long.getLong("gpudf.fuzz.ipcSeed") != null ? new long[] {Long.getLong("gpudf.fuzz.ipcSeed")}
        : new long[] {1, 2, fresh};
    int[] counts = new int[3];
    long deadline = System.nanoTime() + MAX_SECONDS * 1_000_000_000L;
    try (RootAllocator allocator = new RootAllocator(256L << 20)) {
      byte[] file = sample(allocator);
      for (int s = 0; s < seeds.length; s++) {
        Random random = new Random(seeds[s]);
        for (int i = 0; i < INPUTS / seeds.length && System.nanoTime() < deadline; i++) {
          byte[] input = mutate(file, random);
          String what = "seed " + seeds[s] + ", input " + i;
          counts[read(allocator, input, i % 2 == 0, what) ? 0 : 1]++;
          counts[2]++;
        }
      }
    }
    System.out.printf("ArrowFileFuzzTest: %d damaged inputs, %d read, %d refused%n", counts[2], counts[0], counts[1]);
    assertTrue(counts[2] >= Math.min(INPUTS, 1000), "too few inputs ran: " + counts[2]);
    assertTrue(counts[1] > counts[2] / 10, "most damage must be noticed: " + counts[1] + " of " + counts[2]);
  }

  /** Reads {@code input}; true when it was read (and checked), false when it was refused as it must be. */
  private boolean read(BufferAllocator allocator, byte[] input, boolean lazy, String what) throws Exception {
    try (BufferAllocator a = allocator.newChildAllocator(what, 0, 64L << 20)) {
      try {
        Path f = dir.resolve("fuzz.arrow");
        Files.write(f, input);
        if (lazy) {
          try (ArrowIpcSource source = ArrowIpcSource.open(f, a, 40)) {
            int[] all = new int[source.names().size()];
            Arrays.setAll(all, c -> c);
            for (int chunk = 0; chunk < source.chunkRows().size(); chunk++) {
              try (VectorSchemaRoot root = source.read(chunk, all, a)) {
                check(root, input, what);
              }
            }
          }
        } else {
          try (VectorSchemaRoot root = FileTables.read(f, "arrow", a)) {
            check(root, input, what);
          }
        }
        return true;
      } catch (UserException expected) {
        return false;
      } catch (java.io.IOException | RuntimeException e) {
        throw new AssertionError(what + " (" + (lazy ? "lazy" : "whole") + ") escaped as " + e, e);
      }
    }
  }

  /** A batch that was read must be whole, and every string in it must come from the input. */
  private static void check(VectorSchemaRoot root, byte[] input, String what) {
    for (FieldVector v : root.getFieldVectors()) {
      if (v instanceof DecimalVector) {
        // Arrow 18's full validation refuses a decimal with all its digits (see ArrowInput)
        org.apache.arrow.vector.util.ValueVectorUtility.validate(v);
      } else {
        v.validateFull();
      }
      if (v instanceof VarCharVector s) {
        for (int r = 0; r < s.getValueCount(); r++) {
          byte[] value = s.isNull(r) ? null : s.get(r);
          if (value != null && value.length > 0 && !Bytes.contains(input, value)) {
            fail(what + ": row " + r + " holds " + value.length + " bytes that are not in the input");
          }
        }
      }
    }
  }

  private static final long[] EDGES = {0, 1, -1, 7, 8, 2048, 65_536, Integer.MAX_VALUE, Integer.MIN_VALUE,
      Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32};

  private static byte[] mutate(byte[] valid, Random random) {
    byte[] b = valid.clone();
    int kind = random.nextInt(5);
    switch (kind) {
      case 0 -> {
        return Arrays.copyOf(b, random.nextInt(b.length));
      }
      case 1 -> {
        for (int k = 1 + random.nextInt(4); k > 0; k--) {
          int at = random.nextInt(b.length);
          b[at] ^= (byte) (1 << random.nextInt(8));
        }
      }
      case 2 -> {
        long value = random.nextInt(3) == 0 ? random.nextLong() : EDGES[random.nextInt(EDGES.length)];
        int width = random.nextBoolean() ? 4 : 8;
        int at = random.nextInt(Math.max(1, b.length / width - 1)) * width;
        for (int k = 0; k < width && at + k < b.length; k++) {
          b[at + k] = (byte) (value >>> (8 * k));
        }
      }
      case 3 -> {
        int from = random.nextInt(b.length);
        int to = Math.min(b.length, from + 1 + random.nextInt(64));
        byte[] out = new byte[b.length - (to - from)];
        System.arraycopy(b, 0, out, 0, from);
        System.arraycopy(b, to, out, from, b.length - to);
        return out;
      }
      default -> {
        int from = random.nextInt(b.length);
        int len = Math.min(b.length - from, 1 + random.nextInt(64));
        byte[] out = new byte[b.length + len];
        System.arraycopy(b, 0, out, 0, from + len);
        System.arraycopy(b, from, out, from + len, b.length - from);
        return out;
      }
    }
    return b;
  }

  /** Three batches of every column type a file brings, with NULLs and non-ASCII strings. */
  private static byte[] sample(BufferAllocator a) throws Exception {
    List<FieldVector> vs = new ArrayList<>(List.of(new IntVector("i", a), new BigIntVector("l", a),
        new Float8Vector("d", a), new DecimalVector("m", a, 10, 2), new VarCharVector("s", a), new DateDayVector("day", a),
        new TimeStampMicroVector("ts", a), new BitVector("b", a)));
    try (VectorSchemaRoot root = new VectorSchemaRoot(vs)) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (ArrowFileWriter writer = new ArrowFileWriter(root, null, Channels.newChannel(out))) {
        writer.start();
        for (int batch = 0; batch < 3; batch++) {
          root.allocateNew();
          int rows = 20 + batch * 7;
          for (int r = 0; r < rows; r++) {
            boolean nul = (r + batch) % 5 == 0;
            ((IntVector) vs.get(0)).setSafe(r, r * 31 + batch);
            ((BigIntVector) vs.get(1)).setSafe(r, (long) r << 33);
            ((Float8Vector) vs.get(2)).setSafe(r, r / 3.0);
            ((DecimalVector) vs.get(3)).setSafe(r, java.math.BigDecimal.valueOf(r * 101L, 2));
            if (nul) {
              ((VarCharVector) vs.get(4)).setNull(r);
            } else {
              ((VarCharVector) vs.get(4)).setSafe(r, ("värde-" + r + "-日本").getBytes(StandardCharsets.UTF_8));
            }
            ((DateDayVector) vs.get(5)).setSafe(r, 19_000 + r);
            ((TimeStampMicroVector) vs.get(6)).setSafe(r, 1_700_000_000_000_000L + r);
            ((BitVector) vs.get(7)).setSafe(r, r % 2);
            if (nul) {
              ((IntVector) vs.get(0)).setNull(r);
            }
          }
          root.setRowCount(rows);
          writer.writeBatch();
        }
        writer.end();
      }
      return out.toByteArray();
    }
  }
}
