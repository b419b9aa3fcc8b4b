package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.kernels.ParquetDecode.Codec;
import dev.gpudf.kernels.ParquetDecode.Kind;
import dev.gpudf.kernels.ParquetDecode.Page;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * The Parquet page decoder: its CPU twin against the values the pages were written from, the GPU
 * against the twin, over every type it takes, edge row counts, pages whose rows do not start on a
 * 32-row word, NULLs (none, some, all), PLAIN and dictionary pages, Snappy and stored pages,
 * strings of both (empty, non-ASCII, longer than a warp's 32 bytes); and corrupt pages,
 * which both reject with the same error naming the page.
 */
class ParquetDecodeTest {
  private static final int[] SIZES = {0, 1, 31, 32, 33, 1000, 70_001};
  private static final DataType[] TYPES = {DataType.INT32, DataType.INT64, DataType.DATE, DataType.FLOAT32,
      DataType.FLOAT64, DataType.decimal(15, 2), DataType.decimal(9, 2)};

  /** How a case's NULLs fall: a required column (no levels), optional with none, every third, all. */
  private enum Nulls { REQUIRED, NONE, THIRD, ALL }

  /**
   * One column chunk to decode and the values it was written from (null: a NULL row); for a
   * string column, {@code values} index {@code text}.
   */
  private record Case(String name, DataType type, int width, Long[] values, Writer pages, String[] text) {
    Case(String name, DataType type, int width, Long[] values, Writer pages) {
      this(name, type, width, values, pages, null);
    }

    /** Row {@code r} as the decoded column must give it. */
    Object want(int r) {
      return text == null || values[r] == null ? values[r] : text[(int) (long) values[r]];
    }
  }

  /**
   * Strings a string column's rows take, by index: empty, non-ASCII, longer than 32 bytes, and
   * (the last, {@link #LONG_TEXT}, taken only where a case says) longer than the 4,096 bytes of a
   * page of PLAIN strings that the kernel stages at once.
   */
  private static final String[] TEXT = {"", "a", "MAIL", "Grüße, 東京 🚀", "x".repeat(40), "DELIVER IN PERSON", "TRUCK",
      "é", "ü東".repeat(1000)};
  private static final int LONG_TEXT = TEXT.length - 1;

  /** Pages laid out as a writer stores them, with the headers' facts as {@link Page}s. */
  private static final class Writer {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final List<Page> pages = new ArrayList<>();

    int add(byte[] page, Kind kind, Codec codec, int values, boolean levels, int dictionary) {
      return add(codec == Codec.SNAPPY ? snappy(page) : page, page.length, kind, codec, values, levels, dictionary);
    }

    /** A page stored as {@code stored} (compressed by the caller), {@code bytes} once decompressed. */
    int add(byte[] stored, int bytes, Kind kind, Codec codec, int values, boolean levels, int dictionary) {
      pages.add(new Page(this.bytes.size(), stored.length, bytes, values, kind, codec, levels, dictionary));
      this.bytes.writeBytes(stored);
      return pages.size() - 1;
    }

    /** The chunk, its Snappy pages split by the host or the device as {@code hostSplitRatio} says. */
    ParquetDecode.Chunk chunk(BufferAllocator a, DataType type, int width, int rows, long hostSplitRatio) {
      ParquetDecode.Chunk c = chunk(a, type, width, rows);
      c.splitOnHost(hostSplitRatio);
      return c;
    }

    ParquetDecode.Chunk chunk(BufferAllocator a, DataType type, int width, int rows) {
      byte[] b = bytes.toByteArray();
      ArrowBuf buf = a.buffer(Math.max(1, b.length));
      buf.setBytes(0, b);
      try {
        return new ParquetDecode.Chunk(buf.slice(0, b.length), pages, type, width, rows, p -> "t.parquet page " + p);
      } catch (RuntimeException e) {
        buf.close();
        throw e;
      }
    }
  }

  private static byte[] snappy(byte[] b) {
    try {
      return org.xerial.snappy.Snappy.compress(b);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parquet's RLE / bit-packed hybrid of {@code v} at width {@code w}: repeats of 8 or more as runs, the rest bit-packed. */
  static byte[] hybrid(int[] v, int w) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int i = 0;
    while (i < v.length) {
      int j = i;
      while (j < v.length && v[j] == v[i]) {
        j++;
      }
      if (j - i >= 8) {
        varint(out, (long) (j - i) << 1);
        for (int b = 0; b < (w + 7) / 8; b++) {
          out.write(v[i] >>> (8 * b));
        }
        i = j;
        continue;
      }
      int groups = Math.min(8, (v.length - i + 7) / 8);
      varint(out, (long) groups << 1 | 1);
      byte[] packed = new byte[groups * w];
      for (int k = 0; k < groups * 8 && i + k < v.length; k++) {
        for (int bit = 0; bit < w; bit++) {
          if ((v[i + k] >>> bit & 1) != 0) {
            int at = k * w + bit;
            packed[at >>> 3] |= (byte) (1 << (at & 7));
          }
        }
      }
      out.writeBytes(packed);
      i += groups * 8;
    }
    return out.toByteArray();
  }

  private static void varint(ByteArrayOutputStream out, long v) {
    while (v >= 0x80) {
      out.write((int) (v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static void value(ByteArrayOutputStream out, long v, int width) {
    for (int b = 0; b < width; b++) {
      out.write((int) (v >>> (8 * b)));
    }
  }

  /** A dictionary page's entry of {@code v}: a value of {@code width} bytes, or for strings TEXT[v] as BYTE_ARRAY. */
  private static void entry(ByteArrayOutputStream out, long v, int width) {
    if (width == ParquetDecode.BYTE_ARRAY) {
      byte[] b = TEXT[(int) v].getBytes(java.nio.charset.StandardCharsets.UTF_8);
      value(out, b.length, 4);
      out.writeBytes(b);
    } else {
      value(out, v, width);
    }
  }

  /** A data page of {@code rows}: levels when optional, then PLAIN values or indexes into {@code dict}. */
  private static byte[] dataPage(Long[] rows, boolean levels, Map<Long, Integer> dict, int width) {
    ByteArrayOutputStream page = new ByteArrayOutputStream();
    if (levels) {
      int[] defined = new int[rows.length];
      for (int r = 0; r < rows.length; r++) {
        defined[r] = rows[r] == null ? 0 : 1;
      }
      byte[] l = hybrid(defined, 1);
      value(page, l.length, 4);
      page.writeBytes(l);
    }
    List<Long> present = java.util.Arrays.stream(rows).filter(java.util.Objects::nonNull).toList();
    if (dict == null) {
      present.forEach(v -> entry(page, v, width));
    } else {
      int w = 32 - Integer.numberOfLeadingZeros(Math.max(0, dict.size() - 1));
      page.write(w);
      page.writeBytes(hybrid(present.stream().mapToInt(dict::get).toArray(), w));
    }
    return page.toByteArray();
  }

  /**
   * The rows written as two row groups (each with its own dictionary when {@code dictionary}),
   * each in pages of at most 1,000 rows, Snappy and stored pages alternating.
   */
  private static Writer write(Long[] values, boolean levels, boolean dictionary, int width) {
    Writer w = new Writer();
    int half = values.length / 2;
    int page = 0;
    for (int[] group : new int[][] {{0, half}, {half, values.length}}) {
      int dict = -1;
      Map<Long, Integer> entries = null;
      if (dictionary) {
        entries = new LinkedHashMap<>();
        for (int r = group[0]; r < group[1]; r++) {
          if (values[r] != null) {
            entries.putIfAbsent(values[r], entries.size());
          }
        }
        ByteArrayOutputStream d = new ByteArrayOutputStream();
        entries.keySet().forEach(v -> entry(d, v, width));
        dict = w.add(d.toByteArray(), Kind.DICTIONARY, Codec.SNAPPY, entries.size(), false, -1);
      }
      for (int from = group[0]; from < group[1] || from == group[0] && group[0] == group[1]; from += 1000) {
        int to = Math.min(group[1], from + 1000);
        Long[] rows = java.util.Arrays.copyOfRange(values, from, to);
        w.add(dataPage(rows, levels, entries, width), dictionary ? Kind.DICTIONARY_INDEXES : Kind.PLAIN,
            page++ % 2 == 0 ? Codec.SNAPPY : Codec.UNCOMPRESSED, rows.length, levels, dict);
        if (to == from) {
          break;
        }
      }
    }
    return w;
  }

  private static int storedWidth(DataType t) {
    return switch (t.id()) {
      case STRING -> ParquetDecode.BYTE_ARRAY;
      case INT32, DATE, FLOAT32 -> 4;
      case DECIMAL -> t.precision() <= 9 ? 4 : 8;
      default -> 8;
    };
  }

  private static List<Case> cases() {
    List<Case> out = new ArrayList<>();
    Random random = new Random(42);
    // the fixed-width types, then strings (whose rows index TEXT)
    for (DataType type : java.util.stream.Stream.concat(java.util.Arrays.stream(TYPES), java.util.stream.Stream.of(DataType.STRING))
        .toList()) {
      int width = storedWidth(type);
      boolean text = type.id() == dev.gpudf.columnar.TypeId.STRING;
      for (int rows : SIZES) {
        for (Nulls nulls : Nulls.values()) {
          for (boolean dictionary : new boolean[] {false, true}) {
            Long[] values = new Long[rows];
            for (int r = 0; r < rows; r++) {
              boolean isNull = nulls == Nulls.ALL || nulls == Nulls.THIRD && r % 3 == 1;
              long v = text ? random.nextInt(LONG_TEXT) : type.id() == dev.gpudf.columnar.TypeId.DECIMAL
                  ? (random.nextLong() % (type.precision() <= 9 ? 1_000_000_000L : 1_000_000_000_000_000L))
                  : width == 4 ? random.nextInt() : random.nextLong();
              // a dictionary column repeats few values (runs and bit-packed indexes both occur), strings always
              values[r] = isNull ? null : text ? (r / 10 % 3 == 0 ? 3 : v)
                  : dictionary ? (r / 10 % 3 == 0 ? v % 5 : (long) (r % 7)) : v;
            }
            String name = type + " " + rows + " rows " + nulls + (dictionary ? " dictionary" : " plain");
            out.add(new Case(name, type, width, values, write(values, nulls != Nulls.REQUIRED, dictionary, width),
                text ? TEXT : null));
          }
        }
      }
    }
    // one large Snappy page repeating 40,000 bytes: copies reach further back than the kernel's
    // window of recent output in shared memory (32 KiB) and read the output itself
    long[] period = random.longs(5000).toArray();
    Long[] far = new Long[25_000];
    for (int r = 0; r < far.length; r++) {
      far[r] = r % 9 == 4 ? null : period[r % period.length];
    }
    Writer big = new Writer();
    big.add(dataPage(far, true, null, 8), Kind.PLAIN, Codec.SNAPPY, far.length, true, -1);
    out.add(new Case("INT64 one page of far copies", DataType.INT64, 8, far, big));
    // PLAIN strings longer than what the kernel stages at once, between short ones and NULLs
    Long[] longText = new Long[3_000];
    for (int r = 0; r < longText.length; r++) {
      longText[r] = r % 7 == 3 ? null : r % 5 == 0 ? (long) LONG_TEXT : (long) (r % LONG_TEXT);
    }
    out.add(new Case("STRING long values", DataType.STRING, ParquetDecode.BYTE_ARRAY, longText,
        write(longText, true, false, ParquetDecode.BYTE_ARRAY), TEXT));
    return out;
  }

  /**
   * Row {@code r} of a vector: a string's as a String, a fixed-width value's low 64 bits (a 4-byte
   * value sign-extended); null for NULL.
   */
  private static Object raw(FieldVector v, int r) {
    if (v.isNull(r)) {
      return null;
    }
    if (v instanceof org.apache.arrow.vector.VarCharVector s) {
      return new String(s.get(r), java.nio.charset.StandardCharsets.UTF_8);
    }
    int w = ((BaseFixedWidthVector) v).getTypeWidth();
    return w == 4 ? (long) v.getDataBuffer().getInt(4L * r) : v.getDataBuffer().getLong((long) w * r);
  }

  /** The first {@code rows} rows of {@code got} are {@code want}'s (the GPU's against the CPU twin's). */
  private static void assertSameRows(FieldVector want, FieldVector got, int rows, String name) {
    for (int r = 0; r < rows; r++) {
      assertEquals(raw(want, r), raw(got, r), name + " row " + r);
    }
  }

  private static void assertRows(Case c, FieldVector got) {
    assertEquals(c.values().length, got.getValueCount(), c.name());
    for (int r = 0; r < c.values().length; r++) {
      assertEquals(c.want(r), raw(got, r), c.name() + " row " + r);
    }
  }

  @Test
  void theCpuTwinGivesBackWhatWasWritten() {
    try (RootAllocator a = new RootAllocator()) {
      for (Case c : java.util.stream.Stream.concat(cases().stream(), largePages().stream()).toList()) {
        // memory the allocator may hand out again, dirty: the decoder's buffers are not zeroed first
        try (org.apache.arrow.memory.ArrowBuf dirty = a.buffer(16L * c.values().length + 64)) {
          dirty.setOne(0, dirty.capacity());
        }
        try (ParquetDecode.Chunk chunk = c.pages().chunk(a, c.type(), c.width(), c.values().length);
            FieldVector v = ParquetDecode.decodeOnHost(chunk, "c", a)) {
          assertRows(c, v);
          if (v instanceof BaseFixedWidthVector f) {
            // a NULL's slot holds 0, as a zeroed vector's would
            int w = f.getTypeWidth();
            for (int r = 0; r < c.values().length; r++) {
              if (v.isNull(r)) {
                for (int b = 0; b < w; b++) {
                  assertEquals(0, v.getDataBuffer().getByte((long) w * r + b), c.name() + " NULL row " + r);
                }
              }
            }
          }
        }
      }
    }
  }

  /**
   * {@code b} as a Snappy block of one literal, as a compressor other than Google's may write it:
   * valid, but its one element spans every 64 KiB fragment of its output.
   */
  private static byte[] oneLiteral(byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    varint(out, b.length);
    out.write(63 << 2);
    value(out, b.length - 1L, 4);
    out.writeBytes(b);
    return out.toByteArray();
  }

  /**
   * Pages of one column, each alone in a chunk, of sizes about and across the 64 KiB fragments a
   * warp each decodes: random values (long literals), few values (copies); Google's compressor
   * (the test's Snappy) and one literal (not split: decoded whole).
   */
  private static List<Case> largePages() {
    Random random = new Random(11);
    List<Case> out = new ArrayList<>();
    for (int rows : new int[] {8191, 8192, 8193, 16_385, 125_001}) {
      for (boolean few : new boolean[] {false, true}) {
        Long[] values = new Long[rows];
        for (int r = 0; r < rows; r++) {
          values[r] = few ? (long) random.nextInt(50) : random.nextLong();
        }
        byte[] page = dataPage(values, false, null, 8);
        Writer google = new Writer();
        google.add(page, Kind.PLAIN, Codec.SNAPPY, rows, false, -1);
        out.add(new Case("INT64 " + rows + (few ? " few" : " random") + " snappy", DataType.INT64, 8, values, google));
        if (!few) {
          Writer literal = new Writer();
          literal.add(oneLiteral(page), page.length, Kind.PLAIN, Codec.SNAPPY, rows, false, -1);
          out.add(new Case("INT64 " + rows + " one literal", DataType.INT64, 8, values, literal));
        }
      }
    }
    return out;
  }

  /**
   * The host finds where a column's Snappy pages split only where their bytes are at most the
   * ratio times its largest page's: each large page of Google's splits, one literal spanning its
   * fragments does not, and a column of two pages is the device's at a ratio of 1 and the host's at 2.
   */
  @Test
  void theHostSplitsAColumnsFewLargePagesByTheRatio() {
    try (RootAllocator a = new RootAllocator()) {
      for (Case c : largePages()) {
        boolean splits = c.name().endsWith("snappy") && c.values().length * 8L > 65536;
        try (ParquetDecode.Chunk all = c.pages().chunk(a, c.type(), c.width(), c.values().length, Long.MAX_VALUE);
            ParquetDecode.Chunk none = c.pages().chunk(a, c.type(), c.width(), c.values().length, 0)) {
          assertEquals(splits ? 1 : 0, all.pagesSplitOnHost(), c.name());
          assertEquals(0, none.pagesSplitOnHost(), c.name());
        }
      }
      Random random = new Random(5);
      Long[] big = new Long[125_001];
      Long[] small = new Long[16_385];
      java.util.Arrays.setAll(big, r -> random.nextLong());
      java.util.Arrays.setAll(small, r -> random.nextLong());
      Writer two = new Writer();
      two.add(dataPage(big, false, null, 8), Kind.PLAIN, Codec.SNAPPY, big.length, false, -1);
      two.add(dataPage(small, false, null, 8), Kind.PLAIN, Codec.SNAPPY, small.length, false, -1);
      int rows = big.length + small.length;
      try (ParquetDecode.Chunk one = two.chunk(a, DataType.INT64, 8, rows, 1);
          ParquetDecode.Chunk both = two.chunk(a, DataType.INT64, 8, rows, 2)) {
        assertEquals(0, one.pagesSplitOnHost(), "two pages hold more than their largest");
        assertEquals(2, both.pagesSplitOnHost(), "two pages hold less than twice their largest");
      }
    }
  }

  /**
   * Google's Snappy pages of more than 64 KiB split into fragments a warp each decodes, and decode
   * as the CPU twin does; a page of one literal spanning them does not split and decodes whole.
   */
  @RequiresGpu
  @Test
  void theGpuDecodesLargeSnappyPagesAFragmentToAWarp() {
    // each page's fragments found by the device (ratio 0) as it cuts its walk into segments, in
    // segments of 777 and 16 KiB, and whole; then by the host (SnappySplit)
    for (long segment : new long[] {0, 777, SnappySegments.MIN_SEGMENT, SnappySegments.WHOLE}) {
      decodeLargePages(0, segment);
    }
    decodeLargePages(Long.MAX_VALUE, 0);
  }

  private static void decodeLargePages(long ratio, long segment) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 2L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a)) {
      List<Case> cases = largePages();
      List<ParquetDecode.Chunk> chunks = new ArrayList<>();
      try {
        for (Case c : cases) {
          chunks.add(c.pages().chunk(a, c.type(), c.width(), c.values().length, ratio));
        }
        // one launch over them all, as a query's chunks of several columns
        try (ParquetDecode.Pending p = ParquetDecode.launch(g, chunks, segment)) {
          List<DeviceColumn> decoded = p.finish();
          try {
            long split = cases.stream().filter(c -> c.name().endsWith("snappy") && c.values().length * 8L > 65536).count();
            assertEquals(split, p.splitPages(), "pages split into fragments, host split ratio " + ratio + ", segments of "
                + segment);
            for (int k = 0; k < cases.size(); k++) {
              Case c = cases.get(k);
              int rows = c.values().length;
              try (DeviceTable t = new DeviceTable(gpu, List.of("c"), List.of(decoded.set(k, null)), rows);
                  VectorSchemaRoot got = t.toArrow(a, g.stream());
                  FieldVector want = ParquetDecode.decodeOnHost(chunks.get(k), "c", a)) {
                assertSameRows(want, got.getVector(0), rows, c.name());
              }
            }
          } finally {
            decoded.stream().filter(java.util.Objects::nonNull).forEach(DeviceColumn::close);
          }
        }
      } finally {
        chunks.forEach(ParquetDecode.Chunk::close);
      }
    }
  }

  /** The CPU twin's {@code rows} rows of {@code chunk} ({@link #raw}), or null where it refuses the chunk. */
  private static List<Object> twinRows(ParquetDecode.Chunk chunk, int rows, BufferAllocator a) {
    try (FieldVector v = ParquetDecode.decodeOnHost(chunk, "c", a)) {
      List<Object> out = new ArrayList<>();
      for (int r = 0; r < rows; r++) {
        out.add(raw(v, r));
      }
      return out;
    } catch (UserException twinRefused) {
      return null;
    }
  }

  /**
   * Large Snappy pages as written and with bytes changed: the device, its walk cut into segments
   * of several sizes (down to a few hundred bytes, where most segments start inside an element),
   * finds each splitting exactly where the host's walk ({@link SnappySplit}) does, and decodes it
   * as the CPU twin does or refuses it as the twin does; nothing is left on the device.
   */
  @RequiresGpu
  @Test
  void theDeviceSplitsDamagedPagesBySegmentsAsTheHost() {
    Random random = new Random(13);
    List<Case> large = largePages().stream().filter(c -> c.name().endsWith("snappy") && c.values().length * 8L > 65536)
        .toList();
    int split = 0;
    int refused = 0;
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a)) {
      for (int round = 0; round < 40; round++) {
        Case c = large.get(round % large.size());
        int rows = c.values().length;
        Writer w = round < large.size() ? c.pages() : damaged(c, random);
        try (ParquetDecode.Chunk host = w.chunk(a, c.type(), c.width(), rows, Long.MAX_VALUE);
            ParquetDecode.Chunk device = w.chunk(a, c.type(), c.width(), rows, 0)) {
          List<Object> want = twinRows(host, rows, a);
          refused += want == null ? 1 : 0;
          split += host.pagesSplitOnHost();
          for (long segment : new long[] {0, 333, 777, 4096, SnappySegments.WHOLE}) {
            String what = c.name() + " round " + round + ", segments of " + segment;
            try (ParquetDecode.Pending p = ParquetDecode.launch(g, List.of(device), segment)) {
              List<DeviceColumn> got = null;
              try {
                got = p.finish();
              } catch (UserException e) {
                assertEquals(null, want, what + ": the device refused what the twin decoded: " + e.getMessage());
              }
              assertEquals(host.pagesSplitOnHost(), p.splitPages(), what + ": pages split");
              if (got != null) {
                try (DeviceTable t = new DeviceTable(gpu, List.of("c"), got, rows);
                    VectorSchemaRoot r = t.toArrow(a, g.stream())) {
                  assertTrue(want != null, what + ": the device decoded what the twin refused");
                  for (int k = 0; k < rows; k++) {
                    assertEquals(want.get(k), raw(r.getVector(0), k), what + " row " + k);
                  }
                }
              }
            }
          }
        }
      }
      assertEquals(0, gpu.pool().stats().liveBuffers(), "nothing is left on the device");
    }
    // the damage leaves some pages splitting and some not, and some refused
    assertTrue(split > large.size() && split < 40 && refused > 0, split + " split, " + refused + " refused");
  }

  /** Every case of one row count decoded by one call (one launch of each kernel over all their pages). */
  @RequiresGpu
  @Test
  void theGpuDecodesAsTheCpuTwin() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 2L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a)) {
      List<Case> all = cases();
      for (int rows : java.util.stream.IntStream.concat(java.util.Arrays.stream(SIZES), java.util.stream.IntStream.of(25_000, 3_000))
          .toArray()) {
        List<Case> some = all.stream().filter(c -> c.values().length == rows).toList();
        List<ParquetDecode.Chunk> chunks = new ArrayList<>();
        try {
          for (Case c : some) {
            chunks.add(c.pages().chunk(a, c.type(), c.width(), rows));
          }
          List<DeviceColumn> decoded = ParquetDecode.decode(g, chunks);
          List<String> names = some.stream().map(Case::name).toList();
          try (DeviceTable t = new DeviceTable(gpu, names, decoded, rows); VectorSchemaRoot got = t.toArrow(a, g.stream())) {
            for (int k = 0; k < some.size(); k++) {
              Case c = some.get(k);
              try (FieldVector want = ParquetDecode.decodeOnHost(chunks.get(k), "c", a)) {
                assertRows(c, want);
                assertSameRows(want, got.getVector(k), rows, c.name());
                assertEquals(want.getNullCount(), t.column(k).nullCount(), c.name());
              }
            }
          }
        } finally {
          chunks.forEach(ParquetDecode.Chunk::close);
        }
      }
    }
  }

  /** A corrupt chunk and the end of the error it must give. */
  private record Broken(String name, Writer pages, DataType type, int rows, String error) {}

  private static List<Broken> broken() {
    List<Broken> out = new ArrayList<>();
    Long[] values = new Long[100];
    for (int r = 0; r < values.length; r++) {
      values[r] = r % 4 == 0 ? null : (long) r % 3;
    }
    // Snappy cut short: the last byte of the first page's block dropped
    Writer cut = write(values, true, false, 8);
    Page first = cut.pages.get(0);
    cut.pages.set(0, new Page(first.offset(), first.storedBytes() - 1, first.bytes(), first.values(), first.kind(),
        first.codec(), first.levels(), first.dictionary()));
    out.add(new Broken("snappy cut", cut, DataType.INT64, 100, "t.parquet page 0: " + ParquetDecode.Problem.SNAPPY.name()));
    // a block whose preamble gives another size than the header
    Writer size = write(values, true, false, 8);
    Page s0 = size.pages.get(0);
    size.pages.set(0, new Page(s0.offset(), s0.storedBytes(), s0.bytes() + 8, s0.values(), s0.kind(), s0.codec(),
        s0.levels(), s0.dictionary()));
    out.add(new Broken("snappy size", size, DataType.INT64, 100, "t.parquet page 0: SNAPPY"));
    // levels whose length runs past the page (a stored page: its bytes are as written)
    out.add(new Broken("levels length", page(p -> {
      value(p, 1 << 20, 4);
      p.writeBytes(new byte[16]);
    }, 10, true), DataType.INT64, 10, "t.parquet page 0: LEVELS"));
    // levels that end before the page's rows
    out.add(new Broken("levels short", page(p -> {
      byte[] l = hybrid(new int[8], 1);
      value(p, l.length, 4);
      p.writeBytes(l);
    }, 10, true), DataType.INT64, 10, "t.parquet page 0: LEVELS"));
    // a level of 2 in a flat column
    out.add(new Broken("level 2", page(p -> {
      value(p, 2, 4);
      p.write(10 << 1);
      p.write(2);
    }, 10, true), DataType.INT64, 10, "t.parquet page 0: LEVELS"));
    // PLAIN values that run out before the rows do
    out.add(new Broken("short values", page(p -> value(p, 7, 8), 2, false), DataType.INT64, 2,
        "t.parquet page 0: SHORT_VALUES"));
    // an index past the dictionary (3 entries, index 5)
    Writer range = new Writer();
    ByteArrayOutputStream d = new ByteArrayOutputStream();
    for (long v = 0; v < 3; v++) {
      value(d, v, 8);
    }
    int dict = range.add(d.toByteArray(), Kind.DICTIONARY, Codec.UNCOMPRESSED, 3, false, -1);
    ByteArrayOutputStream idx = new ByteArrayOutputStream();
    idx.write(3);
    idx.writeBytes(hybrid(new int[] {0, 1, 2, 5, 0, 1, 2}, 3));
    range.add(idx.toByteArray(), Kind.DICTIONARY_INDEXES, Codec.UNCOMPRESSED, 7, false, dict);
    out.add(new Broken("index range", range, DataType.INT64, 7, "t.parquet page 1: INDEX_RANGE"));
    // a dictionary that says it holds more entries than its bytes do
    Writer big = new Writer();
    int bigDict = big.add(d.toByteArray(), Kind.DICTIONARY, Codec.UNCOMPRESSED, 4, false, -1);
    big.add(idx.toByteArray(), Kind.DICTIONARY_INDEXES, Codec.UNCOMPRESSED, 7, false, bigDict);
    out.add(new Broken("dictionary short", big, DataType.INT64, 7, "t.parquet page 1: INDEXES"));
    // a string's index past its dictionary (2 entries, index 3)
    Writer strings = new Writer();
    ByteArrayOutputStream sd = new ByteArrayOutputStream();
    entry(sd, 1, ParquetDecode.BYTE_ARRAY);
    entry(sd, 3, ParquetDecode.BYTE_ARRAY);
    int stringDict = strings.add(sd.toByteArray(), Kind.DICTIONARY, Codec.SNAPPY, 2, false, -1);
    ByteArrayOutputStream si = new ByteArrayOutputStream();
    si.write(2);
    si.writeBytes(hybrid(new int[] {0, 1, 3, 0}, 2));
    strings.add(si.toByteArray(), Kind.DICTIONARY_INDEXES, Codec.UNCOMPRESSED, 4, false, stringDict);
    out.add(new Broken("string index range", strings, DataType.STRING, 4, "t.parquet page 1: INDEX_RANGE"));
    // PLAIN strings whose second length runs past the page
    out.add(new Broken("string length", page(p -> {
      entry(p, 2, ParquetDecode.BYTE_ARRAY);
      value(p, 100, 4);
      p.writeBytes(new byte[10]);
    }, 2, false), DataType.STRING, 2, "t.parquet page 0: SHORT_VALUES"));
    // strings that are not UTF-8 (a lone continuation byte), PLAIN and in a dictionary
    Writer notText = page(p -> {
      entry(p, 2, ParquetDecode.BYTE_ARRAY);
      value(p, 2, 4);
      p.writeBytes(new byte[] {'a', (byte) 0x80});
    }, 2, false);
    out.add(new Broken("plain not UTF-8", notText, DataType.STRING, 2, "t.parquet page 0 row 1 is not UTF-8"));
    Writer dictNotText = new Writer();
    ByteArrayOutputStream nd = new ByteArrayOutputStream();
    entry(nd, 2, ParquetDecode.BYTE_ARRAY);
    value(nd, 1, 4);
    nd.write(0xc0);
    int ndict = dictNotText.add(nd.toByteArray(), Kind.DICTIONARY, Codec.UNCOMPRESSED, 2, false, -1);
    ByteArrayOutputStream ni = new ByteArrayOutputStream();
    ni.write(1);
    ni.writeBytes(hybrid(new int[] {0, 0, 1}, 1));
    dictNotText.add(ni.toByteArray(), Kind.DICTIONARY_INDEXES, Codec.UNCOMPRESSED, 3, false, ndict);
    out.add(new Broken("dictionary not UTF-8", dictNotText, DataType.STRING, 3, "t.parquet page 0 row 2 is not UTF-8"));
    // more digits than DECIMAL(4, 2) holds
    out.add(new Broken("digits", page(p -> value(p, 12345, 4), 1, false), DataType.decimal(4, 2), 1,
        "t.parquet page 0 row 0 holds more digits than its type DECIMAL(4, 2) has"));
    return out;
  }

  /** One stored PLAIN page of {@code rows} whose bytes {@code body} writes. */
  private static Writer page(Consumer<ByteArrayOutputStream> body, int rows, boolean levels) {
    Writer w = new Writer();
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    body.accept(p);
    w.add(p.toByteArray(), Kind.PLAIN, Codec.UNCOMPRESSED, rows, levels, -1);
    return w;
  }

  /** The message {@code problem} gives, for the expected endings written with the problem's name. */
  private static String expected(String error) {
    for (ParquetDecode.Problem p : ParquetDecode.Problem.values()) {
      if (error.endsWith(": " + p.name())) {
        return error.substring(0, error.length() - p.name().length()) + p.message();
      }
    }
    return error;
  }

  /**
   * A string column's PLAIN pages after a dictionary page that no page takes (a writer's, before it
   * fell back to PLAIN): the dictionary holds no rows, and the rows are the PLAIN pages' strings.
   */
  @Test
  void theCpuTwinSkipsAnUnusedDictionaryBeforePlainStrings() {
    Writer w = new Writer();
    ByteArrayOutputStream d = new ByteArrayOutputStream();
    for (int k = 0; k < 5; k++) {
      entry(d, k, ParquetDecode.BYTE_ARRAY);
    }
    w.add(d.toByteArray(), Kind.DICTIONARY, Codec.SNAPPY, 5, false, -1);
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    for (int k : new int[] {3, 1, 4}) {
      entry(p, k, ParquetDecode.BYTE_ARRAY);
    }
    w.add(p.toByteArray(), Kind.PLAIN, Codec.SNAPPY, 3, false, -1);
    try (RootAllocator a = new RootAllocator()) {
      try (ParquetDecode.Chunk chunk = w.chunk(a, DataType.STRING, ParquetDecode.BYTE_ARRAY, 3);
          FieldVector v = ParquetDecode.decodeOnHost(chunk, "c", a)) {
        assertEquals(3, v.getValueCount());
        assertEquals(List.of(TEXT[3], TEXT[1], TEXT[4]), List.of(v.getObject(0).toString(), v.getObject(1).toString(),
            v.getObject(2).toString()));
      }
      assertEquals(0, a.getAllocatedMemory());
    }
  }

  /**
   * A decimal with more digits than its type, in the second row group, PLAIN and from a dictionary,
   * behind NULLs or with none (a page without NULLs over a dictionary takes its own path): the error
   * names its row in the chunk, not its place among the present values.
   */
  @Test
  void theCpuTwinNamesTheRowOfADecimalPastItsPrecision() {
    for (boolean nulls : new boolean[] {true, false}) {
      Long[] values = new Long[3000];
      for (int r = 0; r < values.length; r++) {
        values[r] = nulls && r % 3 == 0 ? null : (long) (r % 2 == 0 ? 1234 : -1234);
      }
      values[2600] = 12345L;
      try (RootAllocator a = new RootAllocator()) {
        for (boolean dictionary : new boolean[] {false, true}) {
          Writer w = write(values, nulls, dictionary, 4);
          try (ParquetDecode.Chunk chunk = w.chunk(a, DataType.decimal(4, 2), 4, values.length)) {
            UserException e = assertThrows(UserException.class, () -> ParquetDecode.decodeOnHost(chunk, "c", a).close());
            assertEquals("t.parquet page 0 row 2600 holds more digits than its type DECIMAL(4, 2) has", e.getMessage(),
                (dictionary ? "dictionary" : "plain") + (nulls ? " with NULLs" : ""));
          }
        }
        assertEquals(0, a.getAllocatedMemory());
      }
    }
  }

  @Test
  void theCpuTwinRejectsEachCorruptPageNamingIt() {
    try (RootAllocator a = new RootAllocator()) {
      for (Broken b : broken()) {
        try (ParquetDecode.Chunk chunk = b.pages().chunk(a, b.type(), storedWidth(b.type()), b.rows())) {
          UserException e = assertThrows(UserException.class, () -> ParquetDecode.decodeOnHost(chunk, "c", a).close(),
              b.name());
          assertEquals(expected(b.error()), e.getMessage(), b.name());
        }
      }
    }
  }

  /** Each corrupt chunk decoded after a good one in the same call: the error still names its own page. */
  @RequiresGpu
  @Test
  void theGpuRejectsEachCorruptPageAsTheCpuTwin() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a)) {
      Case good = cases().get(40);
      for (Broken b : broken()) {
        try (ParquetDecode.Chunk first = good.pages().chunk(a, good.type(), good.width(), good.values().length);
            ParquetDecode.Chunk chunk = b.pages().chunk(a, b.type(), storedWidth(b.type()), b.rows())) {
          UserException e = assertThrows(UserException.class,
              () -> ParquetDecode.decode(g, List.of(first, chunk)).forEach(DeviceColumn::close), b.name());
          assertEquals(expected(b.error()), e.getMessage(), b.name());
        }
      }
      assertEquals(0, gpu.pool().stats().liveBuffers(), "nothing is left on the device");
    }
  }

  /** The cases the damage tests draw from: every type, both page kinds, NULLs or not, at 33 and 1,000 rows. */
  private static List<Case> toDamage() {
    return cases().stream().filter(c -> c.values().length == 33 || c.values().length == 1000).toList();
  }

  /** {@code c}'s pages with 1 to 4 random bytes changed, the headers' facts kept. */
  private static Writer damaged(Case c, Random random) {
    byte[] b = c.pages().bytes.toByteArray();
    for (int k = 0, n = 1 + random.nextInt(4); k < n && b.length > 0; k++) {
      b[random.nextInt(b.length)] = (byte) random.nextInt(256);
    }
    Writer w = new Writer();
    w.bytes.writeBytes(b);
    w.pages.addAll(c.pages().pages);
    return w;
  }

  /**
   * Random bytes of the stored pages changed: the CPU twin gives rows or a {@link UserException}
   * naming the page, never another exception, and leaks nothing.
   */
  @Test
  void theCpuTwinTakesDamagedPagesAsErrorsNamingThem() {
    Random random = new Random(7);
    List<Case> some = toDamage();
    int errors = 0;
    int decoded = 0;
    try (RootAllocator a = new RootAllocator()) {
      for (int round = 0; round < 2000; round++) {
        Case c = some.get(random.nextInt(some.size()));
        try (ParquetDecode.Chunk chunk = damaged(c, random).chunk(a, c.type(), c.width(), c.values().length);
            FieldVector v = ParquetDecode.decodeOnHost(chunk, "c", a)) {
          assertEquals(c.values().length, v.getValueCount(), c.name());
          decoded++;
        } catch (UserException e) {
          assertTrue(e.getMessage().startsWith("t.parquet page "), c.name() + ": " + e.getMessage());
          errors++;
        }
      }
      assertEquals(0, a.getAllocatedMemory(), "nothing is left of the damaged chunks");
    }
    assertTrue(errors > 100 && decoded > 100, errors + " errors, " + decoded + " decoded");
  }

  /**
   * The same damage on the device: it refuses what the twin refuses and gives the twin's rows for
   * the rest (a page that decodes to other values than written is not an error for either),
   * whether the device or the host found where its Snappy pages split, and nothing is left on the
   * device.
   */
  @RequiresGpu
  @Test
  void theGpuTakesDamagedPagesAsTheCpuTwin() {
    Random random = new Random(11);
    List<Case> some = toDamage();
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        Exec g = Exec.onGpu(gpu, a)) {
      for (int round = 0; round < 300; round++) {
        Case c = some.get(random.nextInt(some.size()));
        int rows = c.values().length;
        ParquetDecode.Chunk chunk;
        try {
          // the fragments of Snappy pages found by the device in even rounds, by the host in odd ones
          chunk = damaged(c, random).chunk(a, c.type(), c.width(), rows, round % 2 == 0 ? 0 : Long.MAX_VALUE);
        } catch (UserException refusedByBoth) {
          // the constructor, which both paths share
          continue;
        }
        try (chunk) {
          // null where the twin refuses it: the device must refuse it too
          List<Object> want = twinRows(chunk, rows, a);
          List<DeviceColumn> got;
          try {
            got = ParquetDecode.decode(g, List.of(chunk));
          } catch (UserException e) {
            assertEquals(null, want, c.name() + " round " + round + ": the device refused what the twin decoded: "
                + e.getMessage());
            continue;
          }
          try (DeviceTable t = new DeviceTable(gpu, List.of("c"), got, rows); VectorSchemaRoot r = t.toArrow(a, g.stream())) {
            assertTrue(want != null, c.name() + " round " + round + ": the device decoded what the twin refused");
            for (int k = 0; k < rows; k++) {
              assertEquals(want.get(k), raw(r.getVector(0), k), c.name() + " round " + round + " row " + k);
            }
          }
        }
      }
      assertEquals(0, gpu.pool().stats().liveBuffers(), "nothing is left on the device");
    }
  }

  @Test
  void headersThatDoNotFitTheirBytesOrRowsAreRejectedBeforeDecoding() {
    try (RootAllocator a = new RootAllocator()) {
      Writer outside = page(p -> value(p, 1, 8), 1, false);
      Page p = outside.pages.get(0);
      outside.pages.set(0, new Page(p.offset() + 1, p.storedBytes(), p.bytes(), 1, Kind.PLAIN, Codec.UNCOMPRESSED,
          false, -1));
      UserException e = assertThrows(UserException.class, () -> outside.chunk(a, DataType.INT64, 8, 1));
      assertEquals("t.parquet page 0: it lies outside its column chunk", e.getMessage());
      UserException rows = assertThrows(UserException.class,
          () -> page(q -> value(q, 1, 8), 1, false).chunk(a, DataType.INT64, 8, 2));
      assertTrue(rows.getMessage().contains("hold 1 rows, not the 2"), rows.getMessage());
      Writer noDict = page(q -> q.write(1), 1, false);
      Page n = noDict.pages.get(0);
      noDict.pages.set(0, new Page(n.offset(), n.storedBytes(), n.bytes(), 1, Kind.DICTIONARY_INDEXES,
          Codec.UNCOMPRESSED, false, 0));
      UserException d = assertThrows(UserException.class, () -> noDict.chunk(a, DataType.INT64, 8, 1));
      assertEquals("t.parquet page 0: it has no dictionary page before it", d.getMessage());
      Writer grows = page(q -> q.writeBytes(new byte[4]), 1, false);
      Page g0 = grows.pages.get(0);
      grows.pages.set(0, new Page(g0.offset(), g0.storedBytes(), 1 << 20, 1, Kind.PLAIN, Codec.SNAPPY, false, -1));
      UserException big = assertThrows(UserException.class, () -> grows.chunk(a, DataType.INT64, 8, 1));
      assertTrue(big.getMessage().contains("cannot come from its 4 stored"), big.getMessage());
      // a string dictionary whose entry says 10 bytes where 3 follow
      Writer cut = new Writer();
      ByteArrayOutputStream cd = new ByteArrayOutputStream();
      value(cd, 10, 4);
      cd.writeBytes(new byte[] {'a', 'b', 'c'});
      int dict = cut.add(cd.toByteArray(), Kind.DICTIONARY, Codec.SNAPPY, 1, false, -1);
      cut.add(new byte[] {0, 2}, Kind.DICTIONARY_INDEXES, Codec.UNCOMPRESSED, 1, false, dict);
      UserException s = assertThrows(UserException.class, () -> cut.chunk(a, DataType.STRING, ParquetDecode.BYTE_ARRAY, 1));
      assertEquals("t.parquet page 0: its dictionary's strings run past its end", s.getMessage());
      // PLAIN and dictionary pages of strings in one chunk are the source's to decode on the host: given here, a bug
      Writer mixed = new Writer();
      ByteArrayOutputStream md = new ByteArrayOutputStream();
      entry(md, 2, ParquetDecode.BYTE_ARRAY);
      int mdict = mixed.add(md.toByteArray(), Kind.DICTIONARY, Codec.UNCOMPRESSED, 1, false, -1);
      mixed.add(new byte[] {0, 2}, Kind.DICTIONARY_INDEXES, Codec.UNCOMPRESSED, 1, false, mdict);
      ByteArrayOutputStream mp = new ByteArrayOutputStream();
      entry(mp, 2, ParquetDecode.BYTE_ARRAY);
      mixed.add(mp.toByteArray(), Kind.PLAIN, Codec.UNCOMPRESSED, 1, false, -1);
      assertThrows(dev.gpudf.columnar.error.InternalException.class,
          () -> mixed.chunk(a, DataType.STRING, ParquetDecode.BYTE_ARRAY, 2));
    }
  }
}
