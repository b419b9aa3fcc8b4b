package dev.gpudf.kernels;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.StringCodes;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.UserException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;

/**
 * Parquet column chunks of a fixed-width or a string column decoded on the GPU ({@code
 * parquet_decode.cu}): the pages go to the device as stored, a warp decompresses each (Snappy, or a
 * copy) and a warp decodes each data page's definition levels and values (PLAIN, or indexes into
 * the chunk's dictionary page). A string column's rows take codes on the device and their strings
 * are gathered by code there: codes into its dictionaries (a few distinct values a row group,
 * decoded on the host), or, for PLAIN strings, into pairs of offsets the device finds in the
 * decompressed pages. The host reads only the page headers, which the file's reader ({@code
 * ParquetSource}) turns into {@link Page}s; {@link #decodeOnHost} is the CPU twin, with the same
 * checks and results, that the GPU is tested against (its Snappy is Google's, through
 * snappy-java). Everything in the bytes is untrusted: a run, length or index that does not fit is
 * a {@link UserException} naming the page, never a read outside the bytes.
 */
public final class ParquetDecode {
  private ParquetDecode() {}

  /** What a page holds. */
  public enum Kind { DICTIONARY, PLAIN, DICTIONARY_INDEXES }

  /** How a page is stored. */
  public enum Codec { UNCOMPRESSED, SNAPPY }

  /** What the decoder found wrong with a page, in the kernel's order of codes (from 1). */
  public enum Problem {
    SNAPPY("its Snappy data is corrupt or not the size its header gives"),
    LENGTH("its stored size is not its size uncompressed"),
    LEVELS("its definition levels are corrupt"),
    INDEXES("its dictionary indexes are corrupt, or its dictionary is shorter than it says"),
    INDEX_RANGE("a dictionary index is past the dictionary's end"),
    SHORT_VALUES("it holds fewer values than its rows need");

    private final String message;

    Problem(String message) {
      this.message = message;
    }

    /** What the error says of the page. */
    public String message() {
      return message;
    }
  }

  /**
   * The stored width given for strings: Parquet's BYTE_ARRAY, each value its 4-byte length and
   * then its bytes.
   */
  public static final int BYTE_ARRAY = 0;

  /** Fields per page in the kernels' table ({@code kFields} in the kernel). */
  private static final int FIELDS = 12;
  /** Bit of a page's flags saying its rows take codes, a string column's ({@code kFlags} in the kernel). */
  private static final long CODES = 1L << 17;
  /** Warps a block of the decode kernel holds, each a page ({@code kDecodeWarps} in the kernel). */
  private static final int WARPS_PER_BLOCK = 4;
  /** Bytes of a page's output a warp decompresses at once (kFragment in parquet_decode.cu). */
  private static final long FRAGMENT = SnappySplit.FRAGMENT;
  /**
   * A column's Snappy pages have their fragments found on the host ({@link SnappySplit}) where
   * their stored bytes are at most this many times its largest page's: the walk costs the reading
   * thread all of them (2-4 ns a byte), and the device its longest page while it walks the others
   * at once (about 47 ns a byte when session 45 chose 16; about 16 ns since session 52's walk by
   * pointer doubling, which would put the break-even nearer 4-8). Set with {@code
   * -Dgpudf.parquet.hostSplitRatio=16}; 0 (the default), every page to the device: session 46
   * measured no gain from 16 on TPC-H SF10's cold q2 (193 against 187 ms).
   */
  static final long HOST_SPLIT_RATIO = Long.getLong("gpudf.parquet.hostSplitRatio", 0);
  /** Snappy makes at most 64 bytes of a 3-byte element; anything said to grow more is corrupt. */
  private static final long MAX_SNAPPY_GROWTH = 32;

  /**
   * One page: its bytes ({@code storedBytes} from {@code offset} of the chunk's bytes, after the
   * header), its size once decompressed, its rows ({@code values}: the header's count, NULLs
   * included; a dictionary's entries), what it holds, how it is stored, whether definition levels
   * (of a flat optional column) precede its values, and for dictionary indexes the index of its
   * dictionary page in the list.
   */
  public record Page(long offset, long storedBytes, long bytes, int values, Kind kind, Codec codec, boolean levels,
      int dictionary) {}

  /**
   * The stored pages of one column over consecutive rows: {@code bytes} (pinned host memory, which
   * this chunk owns and frees on close), the pages in order, the column's type, the width of a
   * stored value (4, 8, or {@link #BYTE_ARRAY} for strings, whose data pages must be all
   * dictionary indexes or all PLAIN) and the rows. {@code where} names a page in errors (file, row
   * group, column). The constructor checks what the headers say against the bytes and the rows, and
   * decodes a string column's dictionaries (a {@link UserException} naming the page when one is
   * corrupt).
   */
  public static final class Chunk implements AutoCloseable {
    private final ArrowBuf bytes;
    private final List<Page> pages;
    private final DataType type;
    private final int storedWidth;
    private final int rows;
    private final IntFunction<String> where;
    // a string column's dictionaries, one after another, or null; whether it is PLAIN strings
    private final Dictionaries dictionaries;
    private final boolean plainStrings;
    // per page, its fragments' starts where the host found them (an empty array: it does not
    // split); null, or a null entry, where the device finds them (splitOnHost)
    private int[][] hostSplits;
    // the end of its last page in `bytes`
    private final long storedBytes;

    public Chunk(ArrowBuf bytes, List<Page> pages, DataType type, int storedWidth, int rows, IntFunction<String> where) {
      this.bytes = bytes;
      this.pages = List.copyOf(pages);
      this.type = type;
      this.storedWidth = storedWidth;
      this.rows = rows;
      this.where = where;
      if (!decodes(type, storedWidth)) {
        throw new InternalException(type + " stored in " + storedWidth + " bytes is not decoded on the device");
      }
      long total = 0;
      long end = 0;
      for (int p = 0; p < this.pages.size(); p++) {
        Page g = this.pages.get(p);
        String bad = null;
        if (g.offset() < 0 || g.storedBytes() < 0 || g.offset() > bytes.capacity() - g.storedBytes()) {
          bad = "it lies outside its column chunk";
        } else if (g.bytes() < 0 || g.values() < 0) {
          bad = "its header gives a negative size";
        } else if (g.codec() == Codec.UNCOMPRESSED ? g.bytes() != g.storedBytes()
            : g.bytes() > MAX_SNAPPY_GROWTH * g.storedBytes() + 64) {
          bad = "its size uncompressed (" + g.bytes() + " bytes) cannot come from its " + g.storedBytes() + " stored";
        } else if (g.kind() == Kind.DICTIONARY_INDEXES && (g.dictionary() < 0 || g.dictionary() >= p
            || this.pages.get(g.dictionary()).kind() != Kind.DICTIONARY)) {
          bad = "it has no dictionary page before it";
        } else if (g.kind() == Kind.DICTIONARY && g.levels()) {
          bad = "a dictionary page has no levels";
        }
        if (bad != null) {
          throw new UserException(where.apply(p) + ": " + bad);
        }
        total += g.kind() == Kind.DICTIONARY ? 0 : g.values();
        end = Math.max(end, g.offset() + g.storedBytes());
      }
      storedBytes = end;
      if (total != rows) {
        throw new UserException(where.apply(0) + ": its data pages hold " + total + " rows, not the " + rows
            + " its row groups give");
      }
      if (!takes(this.pages, storedWidth, rows)) {
        throw new InternalException(where.apply(0) + ": strings the device does not decode were given to it");
      }
      plainStrings = storedWidth == BYTE_ARRAY && this.pages.stream().anyMatch(g -> g.kind() == Kind.PLAIN);
      dictionaries = storedWidth == BYTE_ARRAY && !plainStrings ? new Dictionaries(this) : null;
    }

    /**
     * Finds on this thread where its Snappy pages split for the device's decoding, where they are
     * few enough for that ({@link #HOST_SPLIT_RATIO}); the device finds the others'. A reader of
     * pages for the device calls it once it has read them, so that the walk runs beside other
     * columns' reads; the host's decoder never needs it.
     */
    public void splitOnHost() {
      splitOnHost(HOST_SPLIT_RATIO);
    }

    /** As {@link #splitOnHost()} by {@code ratio} (0: none here). */
    void splitOnHost(long ratio) {
      hostSplits = hostSplits(bytes, pages, ratio);
    }

    /** How many of its pages the host found to split ({@link #splitOnHost}), for tests. */
    int pagesSplitOnHost() {
      return hostSplits == null ? 0 : (int) java.util.Arrays.stream(hostSplits).filter(h -> h != null && h.length > 0).count();
    }

    public int rows() {
      return rows;
    }

    /**
     * The bytes of its pages as stored, up to the end of the last (what goes to the device): what
     * was read from the file, where the buffer may be larger, its allocator rounding sizes up.
     */
    public long storedBytes() {
      return storedBytes;
    }

    @Override
    public void close() {
      bytes.close();
    }
  }

  /** How many fragments of {@link #FRAGMENT} bytes of output page {@code g} is decompressed in (one at least). */
  private static int fragmentCount(Page g) {
    return (int) Math.max(1, (g.bytes() + FRAGMENT - 1) / FRAGMENT);
  }

  /**
   * Each of {@code pages}' fragments' starts, found here where the column's Snappy pages of more
   * than one fragment hold at most {@code ratio} times the largest one's bytes ({@link
   * #HOST_SPLIT_RATIO}); else null. An entry is null for a page the device walks (not Snappy, one
   * fragment, or of 2 GiB or more) and empty for one that does not split.
   */
  private static int[][] hostSplits(ArrowBuf bytes, List<Page> pages, long ratio) {
    if (ratio <= 0) {
      return null;
    }
    long sum = 0;
    long max = 0;
    for (Page g : pages) {
      if (hostSplittable(g)) {
        sum += g.storedBytes();
        max = Math.max(max, g.storedBytes());
      }
    }
    if (max == 0 || sum / ratio > max) {
      return null;
    }
    int[][] out = new int[pages.size()][];
    for (int p = 0; p < pages.size(); p++) {
      Page g = pages.get(p);
      if (hostSplittable(g)) {
        int[] starts = new int[fragmentCount(g)];
        out[p] = SnappySplit.split(bytes, g.offset(), (int) g.storedBytes(), (int) g.bytes(), starts, 0, starts.length)
            ? starts : new int[0];
      }
    }
    return out;
  }

  private static boolean hostSplittable(Page g) {
    return g.codec() == Codec.SNAPPY && fragmentCount(g) > 1 && g.storedBytes() < Integer.MAX_VALUE
        && g.bytes() < Integer.MAX_VALUE;
  }

  /**
   * A string column's dictionary pages decoded on the host, their entries one after another: the
   * strings' bytes, their offsets (one more than the entries) and, for each page of the chunk, the
   * code of its first entry (a dictionary page's) or -1.
   */
  private static final class Dictionaries {
    final byte[] bytes;
    final int[] offsets;
    final int[] base;

    Dictionaries(Chunk c) {
      base = new int[c.pages.size()];
      java.util.Arrays.fill(base, -1);
      java.io.ByteArrayOutputStream strings = new java.io.ByteArrayOutputStream();
      List<Integer> ends = new ArrayList<>();
      ends.add(0);
      for (int p = 0; p < c.pages.size(); p++) {
        Page g = c.pages.get(p);
        if (g.kind() != Kind.DICTIONARY) {
          continue;
        }
        base[p] = ends.size() - 1;
        byte[] d = unsnap(c, g, p);
        int at = 0;
        // each entry takes its 4 bytes of length at least, so the loop ends with the page
        for (int k = 0; k < g.values(); k++) {
          long len = d.length - at < 4 ? -1 : Integer.toUnsignedLong((int) INT_LE.get(d, at));
          if (len < 0 || len > d.length - at - 4) {
            throw new UserException(c.where.apply(p) + ": its dictionary's strings run past its end");
          }
          if (len > Integer.MAX_VALUE - 16 - strings.size()) {
            throw new UserException(c.where.apply(p) + ": its dictionaries hold more than 2 GiB of strings");
          }
          strings.write(d, at + 4, (int) len);
          ends.add(strings.size());
          at += 4 + (int) len;
        }
      }
      bytes = strings.toByteArray();
      offsets = ends.stream().mapToInt(Integer::intValue).toArray();
    }

    int entries() {
      return offsets.length - 1;
    }

    /** The entries as a column on the device; the caller closes it. */
    DeviceColumn upload(Exec exec, DataType type) {
      return new DeviceColumn(type, entries(), 0, exec.upload(bytes), exec.upload(offsets), null);
    }
  }

  /** The strings of {@code values} that {@code codes} ({@code rows} int32, -1 a NULL) name; the caller closes the column. */
  private static DeviceColumn byCode(Exec exec, DeviceColumn values, DeviceBuffer codes, int rows) {
    try (DeviceBuffer bad = exec.allocateZeroed(8)) {
      return GpuGather.columns(exec, List.of(values), codes, rows, true, bad, values.rowCount()).get(0);
    }
  }

  /**
   * Whether the device decodes {@code pages} of a column stored in {@code storedWidth} bytes, over
   * {@code rows} rows, once {@link #decodes} said it takes the column: always, but for strings
   * whose data pages are PLAIN and dictionary indexes both (it finds a column's strings one way)
   * and PLAIN strings past 2 GiB decompressed (it finds them by int32 offsets, two a row). The
   * file's reader asks before it makes a {@link Chunk}, which refuses the others as a bug.
   */
  public static boolean takes(List<Page> pages, int storedWidth, int rows) {
    if (storedWidth != BYTE_ARRAY || pages.stream().noneMatch(g -> g.kind() == Kind.PLAIN)) {
      return true;
    }
    return pages.stream().noneMatch(g -> g.kind() == Kind.DICTIONARY_INDEXES) && rows <= (Integer.MAX_VALUE - 1) / 2
        && pages.stream().mapToLong(g -> (Math.max(0, g.bytes()) + 7) & ~7L).sum() <= Integer.MAX_VALUE;
  }

  /**
   * Whether a column of {@code type} whose values are stored in {@code storedWidth} bytes is one
   * the device decodes: 4- and 8-byte integers, dates, floating point and decimals of up to 18
   * digits (a 4-byte decimal widened to 8), and strings stored as {@link #BYTE_ARRAY} (where
   * their pages are ones it {@link #takes}).
   */
  public static boolean decodes(DataType type, int storedWidth) {
    return switch (type.id()) {
      case STRING -> storedWidth == BYTE_ARRAY;
      case INT32, DATE, FLOAT32 -> storedWidth == 4;
      case INT64, FLOAT64 -> storedWidth == 8;
      case DECIMAL -> type.isDecimal64() && (storedWidth == 4 || storedWidth == 8);
      default -> false;
    };
  }

  /**
   * Columns {@code chunks} decoded on the device, in order, by one launch of each kernel over all
   * their pages; the caller closes the columns and keeps the chunks (whose bytes are read by then).
   */
  public static List<DeviceColumn> decode(Exec exec, List<Chunk> chunks) {
    try (Pending p = launch(exec, chunks)) {
      return p.finish();
    }
  }

  /**
   * Queues the decoding of {@code chunks} on {@code exec}'s stream and returns without waiting, so
   * that the device decodes several tables' chunks at once (a page is one warp's long chain of
   * work: one launch takes about as long for 100 pages as for 500). The caller keeps {@code exec}
   * and the chunks' bytes (uploaded from as the stream runs) until the decoding is closed, and
   * closes it; {@link Pending#finish} waits and gives the columns.
   */
  public static Pending launch(Exec exec, List<Chunk> chunks) {
    return new Pending(exec, chunks, 0);
  }

  /**
   * {@link #launch(Exec, List)} with the device's walk over Snappy pages cut into {@code segment}
   * bytes ({@link SnappySegments}; 0: as it chooses), for tests of its segments.
   */
  static Pending launch(Exec exec, List<Chunk> chunks, long segment) {
    return new Pending(exec, chunks, segment);
  }

  /** A decoding queued on a stream ({@link #launch}): the buffers it writes, until it is finished or closed. */
  public static final class Pending implements AutoCloseable {
    private final Exec exec;
    private final List<Chunk> chunks;
    private final int pages;
    private final Closer scratch = new Closer();
    private final List<DeviceBuffer> outs = new ArrayList<>();
    private final List<DeviceBuffer> validities = new ArrayList<>();
    // per chunk of PLAIN strings, its pairs of offsets and where its pages lie decompressed (else null)
    private final List<DeviceBuffer> pairs = new ArrayList<>();
    private final List<long[]> regions = new ArrayList<>();
    private DeviceBuffer decompressed;
    private DeviceBuffer status;
    // whether finish was called, and whether the stream's work is known to have ended
    private boolean taken;
    private boolean finished;
    private int splitPages;
    // pages whose fragments the host found (SnappySplit), beside those the split kernel counts
    private int hostSplitPages;

    private Pending(Exec exec, List<Chunk> chunks, long segment) {
      this.exec = exec;
      this.chunks = List.copyOf(chunks);
      pages = chunks.stream().mapToInt(c -> c.pages.size()).sum();
      try {
        queue(segment);
      } catch (RuntimeException e) {
        close();
        throw e;
      }
    }

    private void queue(long segment) {
      long[] table = new long[FIELDS * pages];
      long[] srcAt = new long[chunks.size()];
      long srcBytes = 0;
      long dstBytes = 0;
      for (int j = 0; j < chunks.size(); j++) {
        srcAt[j] = srcBytes;
        srcBytes += (chunks.get(j).storedBytes() + 7) & ~7L;
        for (Page g : chunks.get(j).pages) {
          dstBytes += (g.bytes() + 7) & ~7L;
        }
      }
      DeviceBuffer src = scratch.add(exec.allocate(Math.max(8, srcBytes)));
      decompressed = scratch.add(exec.allocate(Math.max(8, dstBytes)));
      status = scratch.add(exec.allocateZeroed(16 + 8L * pages));
      int p = 0;
      long dst = 0;
      for (int j = 0; j < chunks.size(); j++) {
        Chunk c = chunks.get(j);
        exec.uploadPinned(c.bytes.memoryAddress(), c.storedBytes(), src, srcAt[j]);
        // a string's row takes an int32 code; its values take 4 bytes of length at least
        boolean codes = c.storedWidth == BYTE_ARRAY;
        int inWidth = codes ? 4 : c.storedWidth;
        int outWidth = codes ? 4 : c.type.byteWidth();
        DeviceBuffer out = exec.allocate(Math.max(8, (long) c.rows * outWidth));
        outs.add(out);
        DeviceBuffer validity = exec.allocateZeroed(4 * Math.max(1, (c.rows + 31L) / 32));
        validities.add(validity);
        boolean nullIndexes = c.pages.stream().anyMatch(g -> g.levels() && g.kind() == Kind.DICTIONARY_INDEXES);
        DeviceBuffer index = nullIndexes ? scratch.add(exec.allocate(4L * Math.max(1, c.rows))) : null;
        DeviceBuffer pair = c.plainStrings ? exec.allocate(4L * (2L * c.rows + 1)) : null;
        pairs.add(pair);
        long region = dst;
        int first = p;
        long row = 0;
        for (Page g : c.pages) {
          int at = p * FIELDS;
          table[at] = srcAt[j] + g.offset();
          table[at + 1] = g.storedBytes();
          table[at + 2] = dst;
          table[at + 3] = g.bytes();
          table[at + 4] = g.kind() == Kind.DICTIONARY ? 0 : row;
          table[at + 5] = g.values();
          table[at + 6] = g.kind().ordinal() | (long) g.codec().ordinal() << 8 | (g.levels() ? 1L << 16 : 0)
              | (codes ? CODES : 0) | (long) inWidth << 24 | (long) outWidth << 32;
          table[at + 7] = g.dictionary() < 0 ? -1 : first + g.dictionary();
          table[at + 8] = out.address();
          table[at + 9] = validity.address();
          table[at + 10] = pair != null ? pair.address() : index == null ? 0 : index.address();
          table[at + 11] = c.dictionaries != null ? c.dictionaries.base[p - first] : pair != null ? region : 0;
          dst += (g.bytes() + 7) & ~7L;
          row += g.kind() == Kind.DICTIONARY ? 0 : g.values();
          p++;
        }
        regions.add(new long[] {region, dst - region});
        if (pair != null) {
          // the offsets' last entry closes the last pair: the end of the column's bytes
          try (DeviceBuffer end = exec.upload(new int[] {(int) (dst - region)})) {
            exec.copy(pair, 8L * c.rows, end, 0, 4);
          }
        }
      }
      if (pages > 0) {
        DeviceBuffer tab = scratch.add(exec.upload(table));
        int grid = (pages + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
        // each page's first fragment, their count, then each fragment's page
        int[] frags = fragments();
        int count = frags[pages];
        DeviceBuffer fragTable = scratch.add(exec.upload(frags));
        // where each fragment starts in its page's bytes, then whether each page split: 0 for the
        // device to find, 1 split (here or there), 2 found here not to split; and the stored bytes
        // of each page the device walks (0 for the others)
        long[] walks = new long[pages];
        int[] found = null;
        int q = 0;
        for (Chunk c : chunks) {
          for (int k = 0; k < c.pages.size(); k++, q++) {
            Page g = c.pages.get(k);
            int[] at = c.hostSplits == null ? null : c.hostSplits[k];
            if (at != null) {
              found = found == null ? new int[count + pages] : found;
              if (at.length > 0) {
                System.arraycopy(at, 0, found, frags[q], at.length);
                found[count + q] = 1;
                hostSplitPages++;
              } else {
                found[count + q] = 2;
              }
            } else if (g.codec() == Codec.SNAPPY && frags[q + 1] - frags[q] > 1) {
              walks[q] = g.storedBytes();
            }
          }
        }
        DeviceBuffer starts = scratch.add(found != null ? exec.upload(found) : exec.allocateZeroed(4L * (count + pages)));
        long split = starts.address() + 4L * count;
        SnappySegments.queue(exec, scratch::add, segment, src, srcBytes, tab, walks, fragTable, starts, split, status);
        // a block of one warp a fragment: each keeps its window of recent output in shared memory
        KernelLaunch.launch("parquet_unsnap_kernel", count, 32, exec.stream(), src, decompressed, tab, (long) pages,
            fragTable, starts, split, (long) count, status);
        KernelLaunch.launch("parquet_decode_kernel", grid, 32 * WARPS_PER_BLOCK, exec.stream(), decompressed, tab,
            (long) pages, status.address() + 16, status);
      }
    }

    /**
     * Each page's first fragment of {@link #FRAGMENT} bytes of its output (in the pages' order),
     * their count, then each fragment's page: the kernels' layout.
     */
    private int[] fragments() {
      long[] first = new long[pages + 1];
      int p = 0;
      for (Chunk c : chunks) {
        for (Page g : c.pages) {
          first[p + 1] = first[p] + fragmentCount(g);
          p++;
        }
      }
      int count = Math.toIntExact(first[pages]);
      int[] out = new int[pages + 1 + count];
      for (p = 0; p < pages; p++) {
        out[p] = (int) first[p];
        java.util.Arrays.fill(out, pages + 1 + (int) first[p], pages + 1 + (int) first[p + 1], p);
      }
      out[pages] = count;
      return out;
    }

    /** How many Snappy pages decoded a fragment to a warp (once finished): the rest decoded whole. */
    public int splitPages() {
      if (!finished) {
        throw new InternalException("a Parquet decoding was asked how its pages split before it finished");
      }
      return splitPages;
    }

    /**
     * Waits for the decoding and gives the columns, in the chunks' order, to the caller, who
     * closes them; a {@link UserException} naming the page when one is corrupt. Once only.
     */
    public List<DeviceColumn> finish() {
      if (taken) {
        throw new InternalException("a Parquet decoding was finished twice");
      }
      taken = true;
      // (code, page) of the first problem, then each page's count of rows present; the wait
      // also ends the uploads from the chunks' bytes
      long[] result;
      if (pages > 0) {
        result = exec.readLongs(status, pages + 2);
      } else {
        exec.stream().synchronize();
        result = new long[2];
      }
      finished = true;
      splitPages = (int) (result[0] >>> 32) + hostSplitPages;
      if ((int) result[0] != 0) {
        int page = (int) result[1];
        int j = 0;
        while (page >= chunks.get(j).pages.size()) {
          page -= chunks.get(j++).pages.size();
        }
        throw problem(chunks.get(j), Problem.values()[(int) result[0] - 1], page);
      }
      List<DeviceColumn> columns = new ArrayList<>();
      try {
        int p = 0;
        for (int j = 0; j < chunks.size(); j++) {
          Chunk c = chunks.get(j);
          long present = 0;
          for (int k = 0; k < c.pages.size(); k++) {
            present += result[2 + p++];
          }
          int nulls = Math.toIntExact(c.rows - present);
          DeviceBuffer validity = validities.set(j, null);
          if (c.storedWidth == BYTE_ARRAY) {
            // the codes of NULL rows are -1, which the gather makes NULL
            validity.close();
            long[] region = regions.get(j);
            try (DeviceBuffer codes = outs.set(j, null);
                DeviceColumn values = c.plainStrings ? new DeviceColumn(c.type, 2 * c.rows, 0,
                    decompressed.slice(region[0], region[1]), pairs.set(j, null), null) : c.dictionaries.upload(exec, c.type)) {
              columns.add(byCode(exec, values, codes, c.rows));
            }
            continue;
          }
          if (nulls == 0) {
            validity.close();
            validity = null;
          }
          columns.add(new DeviceColumn(c.type, c.rows, nulls, outs.set(j, null), null, validity));
        }
        // digits past a decimal's precision, and strings that are not UTF-8, as Arrow's reader is checked
        for (int j = 0; j < chunks.size(); j++) {
          if (chunks.get(j).type.id() == TypeId.DECIMAL || chunks.get(j).type.id() == TypeId.STRING) {
            InputCheck.check(exec, columns.get(j), chunks.get(j).where.apply(0));
          }
        }
        return columns;
      } catch (RuntimeException e) {
        columns.forEach(DeviceColumn::close);
        throw e;
      }
    }

    /**
     * Frees what the decoding holds on the device (in the stream's order: a decoding never
     * finished may still be running) and waits for the stream when it was not finished, so that
     * the chunks' bytes may be freed after this.
     */
    @Override
    public void close() {
      try (scratch) {
        for (DeviceBuffer b : outs) {
          if (b != null) {
            b.close();
          }
        }
        for (DeviceBuffer b : validities) {
          if (b != null) {
            b.close();
          }
        }
        for (DeviceBuffer b : pairs) {
          if (b != null) {
            b.close();
          }
        }
      } finally {
        if (!finished) {
          finished = true;
          exec.stream().synchronize();
        }
      }
    }
  }

  /** Device buffers closed together. */
  private static final class Closer implements AutoCloseable {
    private final List<DeviceBuffer> held = new ArrayList<>();

    DeviceBuffer add(DeviceBuffer b) {
      held.add(b);
      return b;
    }

    @Override
    public void close() {
      held.forEach(DeviceBuffer::close);
    }
  }

  private static UserException problem(Chunk c, Problem p, int page) {
    return new UserException(c.where.apply(page) + ": " + p.message);
  }

  // ---- the CPU twin ----

  private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * {@link #decodeOnHost} as a column the caller closes, a column of dictionary-coded strings
   * whose dictionary holds at most a quarter as many entries as it has rows kept as its codes
   * ({@link HostColumn#encoded}, its vector made from {@code allocator} when first read): a filter
   * or grouping on it then works per entry and per code, not per string.
   */
  public static HostColumn decodeOnHostColumn(Chunk c, String name, BufferAllocator allocator) {
    if (c.storedWidth == BYTE_ARRAY && !c.plainStrings) {
      StringCodes codes = codes(c, allocator);
      org.apache.arrow.vector.types.pojo.Field field = ArrowTypes.toArrowField(name, c.type);
      if (codes.entries() * 4L <= codes.rows()) {
        return HostColumn.encoded(codes, field, allocator);
      }
      try (StringCodes taken = codes) {
        return new HostColumn(taken.vector(allocator, field));
      }
    }
    return new HostColumn(decodeOnHost(c, name, allocator));
  }

  /**
   * {@code c} decoded on the host into a vector named {@code name} from {@code allocator} (the
   * caller closes it): what {@link #decode} computes, page by page in the same order, with the
   * same checks. Also the CPU backend's decoder of Parquet files, so it writes the vector's buffers
   * directly: every row it writes is below the chunk's rows, which the {@link Chunk} checked
   * against its pages.
   */
  public static FieldVector decodeOnHost(Chunk c, String name, BufferAllocator allocator) {
    if (c.storedWidth == BYTE_ARRAY && !c.plainStrings) {
      try (StringCodes codes = codes(c, allocator)) {
        return codes.vector(allocator, ArrowTypes.toArrowField(name, c.type));
      }
    }
    FieldVector v = ArrowTypes.toArrowField(name, c.type).createVector(allocator);
    try {
      if (c.storedWidth == BYTE_ARRAY) {
        plainStrings(c, (BaseVariableWidthVector) v);
      } else {
        fixedWidth(c, (BaseFixedWidthVector) v);
      }
      v.setValueCount(c.rows);
      return v;
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }

  /** A data page's definition levels as read: where its values start, how many it holds, and which rows (null: all). */
  private static final class PageRows {
    int at;
    int count;
    boolean[] present;
    // scratch, grown to the largest page: levels, then the dictionary indexes or which rows are
    // present; a fixed-width page's values
    int[] ints = new int[0];
    boolean[] rows = new boolean[0];

    long[] longs = new long[0];

    int[] ints(int n) {
      if (ints.length < n) {
        ints = new int[n];
      }
      return ints;
    }

    long[] longs(int n) {
      if (longs.length < n) {
        longs = new long[n];
      }
      return longs;
    }

    /** The page's row of its {@code k}th present value. */
    int row(int k) {
      if (present == null) {
        return k;
      }
      for (int r = 0, seen = 0; ; r++) {
        if (present[r] && seen++ == k) {
          return r;
        }
      }
    }

    /** Reads page {@code p}'s levels from {@code data} (its bytes decompressed). */
    void read(Chunk c, int p, byte[] data) {
      Page g = c.pages.get(p);
      at = 0;
      count = g.values();
      present = null;
      if (!g.levels()) {
        return;
      }
      if (data.length < 4) {
        throw problem(c, Problem.LEVELS, p);
      }
      long len = Integer.toUnsignedLong((int) INT_LE.get(data, 0));
      if (len > data.length - 4) {
        throw problem(c, Problem.LEVELS, p);
      }
      at = (int) (4 + len);
      if (Hybrid.allOnes(data, 4, at, g.values())) {
        // a column with no NULL in the page: one run of present rows, as writers store it
        return;
      }
      int[] levels = ints(g.values());
      if (!Hybrid.decode(data, 4, at, 1, levels, g.values())) {
        throw problem(c, Problem.LEVELS, p);
      }
      if (rows.length < g.values()) {
        rows = new boolean[g.values()];
      }
      count = 0;
      for (int i = 0; i < g.values(); i++) {
        if (levels[i] > 1) {
          throw problem(c, Problem.LEVELS, p);
        }
        rows[i] = levels[i] == 1;
        count += levels[i];
      }
      present = count == g.values() ? null : rows;
    }

    boolean has(int r) {
      return present == null || present[r];
    }

    /**
     * Page {@code p}'s dictionary indexes into its dictionary of {@code entries} entries (the
     * page's bytes from {@link #at}), checked; in {@link #ints}.
     */
    int[] indexes(Chunk c, int p, byte[] data, int entries) {
      int[] index = unchecked(c, p, data);
      for (int k = 0; k < count; k++) {
        if (Integer.toUnsignedLong(index[k]) >= entries) {
          throw problem(c, Problem.INDEX_RANGE, p);
        }
      }
      return index;
    }

    /** Page {@code p}'s dictionary indexes as {@link #indexes} reads them, not yet checked against the dictionary. */
    int[] unchecked(Chunk c, int p, byte[] data) {
      if (at >= data.length || (data[at] & 0xff) > 32) {
        throw problem(c, Problem.INDEXES, p);
      }
      int[] index = ints(count);
      if (!Hybrid.decode(data, at + 1, data.length, data[at] & 0xff, index, count)) {
        throw problem(c, Problem.INDEXES, p);
      }
      return index;
    }
  }

  private static void fixedWidth(Chunk c, BaseFixedWidthVector v) {
    int width = v.getTypeWidth();
    // buffers as the allocator gives them: allocateNew would zero them, and every row's slot and
    // validity bit is written below (a NULL row's value as 0)
    try (ArrowBuf validity = v.getAllocator().buffer(Math.max(8, (c.rows + 63L) / 64 * 8));
        ArrowBuf values = v.getAllocator().buffer(Math.max(1, (long) c.rows * width))) {
      v.loadFieldBuffers(new org.apache.arrow.vector.ipc.message.ArrowFieldNode(c.rows, 0), List.of(validity, values));
    }
    long data = v.getDataBuffer().memoryAddress();
    long valid = v.getValidityBuffer().memoryAddress();
    MemoryUtil.setMemory(valid, (c.rows + 7) / 8, (byte) 0);
    long limit = c.type.id() == TypeId.DECIMAL ? TEN[c.type.precision()] : 0;
    int w = c.storedWidth;
    byte[][] dictionaries = new byte[c.pages.size()][];
    // each dictionary's entries as longs, made when a page first takes it, and whether all of
    // them fit the decimal type (then its pages' values need no check of their own)
    long[][] entries = new long[c.pages.size()][];
    boolean[] fit = new boolean[c.pages.size()];
    PageRows page = new PageRows();
    int row = 0;
    for (int p = 0; p < c.pages.size(); p++) {
      Page g = c.pages.get(p);
      byte[] bytes = unsnap(c, g, p);
      if (g.kind() == Kind.DICTIONARY) {
        dictionaries[p] = bytes;
        continue;
      }
      page.read(c, p, bytes);
      if (g.kind() == Kind.PLAIN) {
        if ((bytes.length - page.at) / w < page.count) {
          throw problem(c, Problem.SHORT_VALUES, p);
        }
        if (page.present == null && limit == 0 && w == width) {
          // stored as the vector holds them: one copy
          MemoryUtil.copyToMemory(bytes, page.at, data + (long) row * width, (long) page.count * width);
          setValid(valid, row, g.values(), page);
          row += g.values();
          continue;
        }
      }
      long[] values = page.longs(page.count);
      if (g.kind() == Kind.PLAIN) {
        toLongs(bytes, page.at, w, values, page.count);
      } else {
        int d = g.dictionary();
        int count = c.pages.get(d).values();
        if (entries[d] == null) {
          if (dictionaries[d].length / w < count) {
            throw problem(c, Problem.INDEXES, p);
          }
          entries[d] = toLongs(dictionaries[d], 0, w, new long[count], count);
          fit[d] = limit == 0 || fits(entries[d], limit);
        }
        long[] dictionary = entries[d];
        if (page.present == null && fit[d]) {
          // every row a value: the entries go straight into the vector, one pass
          gather(c, p, dictionary, page.unchecked(c, p, bytes), page.count, data + (long) row * width, width);
          setValid(valid, row, g.values(), page);
          row += g.values();
          continue;
        }
        int[] index = page.indexes(c, p, bytes, count);
        for (int k = 0; k < page.count; k++) {
          values[k] = dictionary[index[k]];
        }
      }
      if (limit != 0) {
        for (int k = 0; k < page.count; k++) {
          if (values[k] >= limit || values[k] <= -limit) {
            throw new UserException(c.where.apply(0) + " row " + (row + page.row(k)) + " holds more digits than its type "
                + c.type + " has");
          }
        }
      }
      write(values, page, data + (long) row * width, width, g.values());
      setValid(valid, row, g.values(), page);
      row += g.values();
    }
  }

  private static boolean fits(long[] values, long limit) {
    for (long x : values) {
      if (x >= limit || x <= -limit) {
        return false;
      }
    }
    return true;
  }

  /**
   * The {@code n} entries of {@code dictionary} that {@code index} names, each index checked, into
   * slots of {@code width} (as {@link #write}) from address {@code to}: the dictionary path's
   * lookup, check and write in one loop, where three passes over the page cost a third of a
   * column's decode under the client compiler.
   */
  private static void gather(Chunk c, int p, long[] dictionary, int[] index, int n, long to, int width) {
    int entries = dictionary.length;
    int k = 0;
    // a loop per width: the client compiler would test the width again for every value
    if (width == 8) {
      for (; k < n && index[k] >= 0 && index[k] < entries; k++) {
        MemoryUtil.putLong(to + 8L * k, dictionary[index[k]]);
      }
    } else if (width == 4) {
      for (; k < n && index[k] >= 0 && index[k] < entries; k++) {
        MemoryUtil.putInt(to + 4L * k, (int) dictionary[index[k]]);
      }
    } else {
      for (; k < n && index[k] >= 0 && index[k] < entries; k++) {
        long x = dictionary[index[k]];
        MemoryUtil.putLong(to + 16L * k, x);
        MemoryUtil.putLong(to + 16L * k + 8, x >> 63);
      }
    }
    if (k < n) {
      throw problem(c, Problem.INDEX_RANGE, p);
    }
  }

  /**
   * {@code n} values of {@code w} (4 or 8) bytes from {@code b[from]}, little-endian and signed,
   * into {@code out}: a bulk copy, where reading a value at a time through a view handle is a call
   * a value under the client compiler that runs a one-shot statement.
   */
  private static long[] toLongs(byte[] b, int from, int w, long[] out, int n) {
    java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(b, from, n * w).order(ByteOrder.LITTLE_ENDIAN);
    if (w == 8) {
      buffer.asLongBuffer().get(out, 0, n);
    } else {
      int[] ints = new int[n];
      buffer.asIntBuffer().get(ints, 0, n);
      for (int k = 0; k < n; k++) {
        out[k] = ints[k];
      }
    }
    return out;
  }

  /**
   * A page's present values into its rows' slots of {@code width} (4, 8 or 16: a 16-byte decimal
   * takes the value's sign as its high word) from address {@code to}; rows that are NULL take 0.
   */
  private static void write(long[] values, PageRows page, long to, int width, int rows) {
    if (page.present == null) {
      int n = page.count;
      if (width == 4) {
        for (int k = 0; k < n; k++) {
          MemoryUtil.putInt(to + 4L * k, (int) values[k]);
        }
      } else if (width == 8) {
        for (int k = 0; k < n; k++) {
          MemoryUtil.putLong(to + 8L * k, values[k]);
        }
      } else {
        for (int k = 0; k < n; k++) {
          long x = values[k];
          MemoryUtil.putLong(to + 16L * k, x);
          MemoryUtil.putLong(to + 16L * k + 8, x >> 63);
        }
      }
      return;
    }
    int k = 0;
    for (int r = 0; r < rows; r++) {
      long x = page.present[r] ? values[k++] : 0;
      long at = to + (long) r * width;
      if (width == 4) {
        MemoryUtil.putInt(at, (int) x);
      } else {
        MemoryUtil.putLong(at, x);
        if (width == 16) {
          MemoryUtil.putLong(at + 8, x >> 63);
        }
      }
    }
  }

  /** Sets the validity bits of the {@code values} rows of a page from {@code row}: all of them, or those present. */
  private static void setValid(long valid, int row, int values, PageRows page) {
    int r = 0;
    if (page.present == null) {
      // whole bytes at once between the partial first and last
      for (; r < values && (row + r & 7) != 0; r++) {
        setBit(valid, row + r);
      }
      int bytes = (values - r) >>> 3;
      MemoryUtil.setMemory(valid + (row + r >>> 3), bytes, (byte) -1);
      r += bytes << 3;
    }
    for (; r < values; r++) {
      if (page.has(r)) {
        setBit(valid, row + r);
      }
    }
  }

  private static void setBit(long valid, int bit) {
    long at = valid + (bit >>> 3);
    MemoryUtil.putByte(at, (byte) (MemoryUtil.getByte(at) | 1 << (bit & 7)));
  }

  /** A column of PLAIN strings, every string checked to be UTF-8 (dictionary-coded ones: {@link #codes}). */
  private static void plainStrings(Chunk c, BaseVariableWidthVector v) {
    PageRows page = new PageRows();
    int rows = c.rows;
    byte[][] plain = new byte[c.pages.size()][];
    long bytes = 0;
    for (int p = 0; p < c.pages.size(); p++) {
      plain[p] = unsnap(c, c.pages.get(p), p);
      bytes += plain[p].length;
    }
    // a page's strings take no more than its bytes ({@link #takes}: 2 GiB at most in all)
    v.allocateNew(Math.max(1, bytes), rows);
    long offsets = v.getOffsetBuffer().memoryAddress();
    long data = v.getDataBuffer().memoryAddress();
    long valid = v.getValidityBuffer().memoryAddress();
    MemoryUtil.setMemory(valid, (rows + 7) / 8, (byte) 0);
    int end = 0;
    int row = 0;
    for (int p = 0; p < c.pages.size(); p++) {
      Page g = c.pages.get(p);
      // a dictionary page no data page takes (a writer's, before it fell back to PLAIN) holds no rows
      if (g.kind() == Kind.DICTIONARY) {
        continue;
      }
      byte[] d = plain[p];
      page.read(c, p, d);
      if ((d.length - page.at) / 4 < page.count) {
        throw problem(c, Problem.SHORT_VALUES, p);
      }
      int at = page.at;
      for (int r = 0; r < g.values(); r++) {
        MemoryUtil.putInt(offsets + 4L * (row + r), end);
        if (!page.has(r)) {
          continue;
        }
        long len = d.length - at < 4 ? -1 : Integer.toUnsignedLong((int) INT_LE.get(d, at));
        if (len < 0 || len > d.length - at - 4) {
          throw problem(c, Problem.SHORT_VALUES, p);
        }
        copy(d, at + 4, data + end, (int) len);
        if (!dev.gpudf.columnar.ArrowInput.utf8(data, end, end + (int) len)) {
          throw new UserException(c.where.apply(0) + " row " + (row + r) + " is not UTF-8");
        }
        setBit(valid, row + r);
        end += (int) len;
        at += 4 + (int) len;
      }
      row += g.values();
    }
    MemoryUtil.putInt(offsets + 4L * rows, end);
    v.setLastSet(rows - 1);
  }

  /**
   * A dictionary-coded string column as its dictionaries' entries and each row's code (canonical:
   * see {@link StringCodes}), the codes from {@code allocator}; every entry a row takes checked to
   * be UTF-8, an error naming the first row that takes a bad one. The caller closes it.
   */
  public static StringCodes codes(Chunk c, BufferAllocator allocator) {
    if (c.storedWidth != BYTE_ARRAY || c.plainStrings) {
      throw new InternalException(c.where.apply(0) + ": not a column of dictionary-coded strings");
    }
    PageRows page = new PageRows();
    Dictionaries dict = c.dictionaries;
    // each row's code written canonical, and each entry a row takes checked to be UTF-8 at the
    // first row that takes it, and the rows' strings counted (so that a column past Arrow's 2 GiB
    // is refused here, naming its file): one pass over the rows, where checking, counting and
    // making canonical each took one of their own
    int[] first = StringCodes.firstEqual(dict.bytes, dict.offsets);
    boolean[] checked = new boolean[dict.entries()];
    long bytes = 0;
    int nulls = 0;
    ArrowBuf buffer = allocator.buffer(4L * c.rows);
    // the dictionary's bytes where the UTF-8 check reads them
    try (ArrowBuf text = allocator.buffer(Math.max(1, dict.bytes.length))) {
      text.setBytes(0, dict.bytes);
      long codes = buffer.memoryAddress();
      int row = 0;
      for (int p = 0; p < c.pages.size(); p++) {
        Page g = c.pages.get(p);
        if (g.kind() == Kind.DICTIONARY) {
          continue;
        }
        byte[] d = unsnap(c, g, p);
        page.read(c, p, d);
        int base = dict.base[g.dictionary()];
        int[] index = page.indexes(c, p, d, c.pages.get(g.dictionary()).values());
        int k = 0;
        for (int r = 0; r < g.values(); r++) {
          int code = -1;
          if (page.has(r)) {
            code = first[base + index[k++]];
            if (!checked[code]) {
              if (!dev.gpudf.columnar.ArrowInput.utf8(text.memoryAddress(), dict.offsets[code], dict.offsets[code + 1])) {
                throw new UserException(c.where.apply(0) + " row " + (row + r) + " is not UTF-8");
              }
              checked[code] = true;
            }
            bytes += dict.offsets[code + 1] - dict.offsets[code];
          } else {
            nulls++;
          }
          MemoryUtil.putInt(codes + 4L * (row + r), code);
        }
        row += g.values();
      }
      if (bytes > Integer.MAX_VALUE - 8) {
        throw new UserException(c.where.apply(0) + ": its " + c.rows + " rows hold more than a column's 2 GiB of strings");
      }
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
    return StringCodes.of(dict.bytes, dict.offsets, buffer, c.rows, nulls);
  }

  /** {@code len} bytes of {@code src} from {@code from} to address {@code to}: a short string without a call. */
  private static void copy(byte[] src, int from, long to, int len) {
    if (len > 16) {
      MemoryUtil.copyToMemory(src, from, to, len);
      return;
    }
    // the array's own bounds check stands for the copy's
    java.util.Objects.checkFromIndexSize(from, len, src.length);
    for (int i = 0; i < len; i++) {
      MemoryUtil.putByte(to + i, src[from + i]);
    }
  }

  private static byte[] unsnap(Chunk c, Page g, int p) {
    byte[] in = new byte[Math.toIntExact(g.storedBytes())];
    c.bytes.getBytes(g.offset(), in);
    if (g.codec() == Codec.UNCOMPRESSED) {
      return in;
    }
    byte[] out = new byte[Math.toIntExact(g.bytes())];
    try {
      // the block's own size first: Snappy writes what the block declares, so a block that
      // declares more than the page header's size would run past the array
      if (org.xerial.snappy.Snappy.uncompressedLength(in) != out.length
          || org.xerial.snappy.Snappy.uncompress(in, 0, in.length, out, 0) != out.length) {
        throw problem(c, Problem.SNAPPY, p);
      }
    } catch (java.io.IOException e) {
      throw new UserException(c.where.apply(p) + ": " + Problem.SNAPPY.message, e);
    }
    return out;
  }

  private static final long[] TEN = java.util.stream.LongStream.iterate(1, x -> x * 10).limit(19).toArray();

  /** Parquet's RLE / bit-packed hybrid, as the kernel reads it. */
  static final class Hybrid {
    private Hybrid() {}

    /**
     * Whether {@code b[from, to)} starts with one run of {@code n} or more 1-bit values of 1 (a
     * page's definition levels where every row is present), which {@link #decode} would read as
     * {@code n} ones.
     */
    static boolean allOnes(byte[] b, int from, int to, int n) {
      long header = header(b, from, to);
      if (header < 0) {
        return false;
      }
      long h = header & 0xffffffffL;
      int p = from + (int) (header >>> 32);
      return (h & 1) == 0 && h >>> 1 >= n && p < to && b[p] == 1;
    }

    /**
     * The run header (an unsigned LEB128 of at most 32 bits) at {@code b[p, to)}: its value in the
     * low 32 bits and its bytes in the high ones; -1 when it is longer or cut short.
     */
    private static long header(byte[] b, int p, int to) {
      long h = 0;
      for (int shift = 0, k = 0; ; shift += 7, k++) {
        if (shift >= 35 || p + k >= to) {
          return -1;
        }
        int x = b[p + k] & 0xff;
        h |= (long) (x & 0x7f) << shift;
        if ((x & 0x80) == 0) {
          return h <= 0xffffffffL ? (long) (k + 1) << 32 | h : -1;
        }
      }
    }

    /** The little-endian long at {@code b[at, at + 8)}, which the caller checked lies within {@code b}. */
    private static long longLe(byte[] b, int at) {
      long x = MemoryUtil.getLong(b, at);
      return MemoryUtil.LITTLE_ENDIAN ? x : Long.reverseBytes(x);
    }

    /** Decodes {@code n} values of width {@code w} from {@code b[from, to)} into {@code out}; false when the runs are malformed or short. */
    static boolean decode(byte[] b, int from, int to, int w, int[] out, int n) {
      int p = from;
      int i = 0;
      int valueBytes = (w + 7) / 8;
      long mask = (1L << w) - 1;
      while (i < n) {
        long header = header(b, p, to);
        if (header < 0) {
          return false;
        }
        long h = header & 0xffffffffL;
        p += (int) (header >>> 32);
        if ((h & 1) != 0) {
          long groups = h >>> 1;
          long bytes = groups * w;
          if (groups == 0 || to - p < bytes) {
            return false;
          }
          int take = (int) Math.min(groups * 8, n - i);
          // whole groups of eight values (w bytes each) from little-endian longs, where eight
          // bytes can be read from each value's first byte within the array
          int k = 0;
          int q = p;
          for (; k + 8 <= take && q + w + 8 <= b.length; k += 8, q += w) {
            for (int j = 0; j < 8; j++) {
              int bit = j * w;
              out[i + k + j] = (int) (longLe(b, q + (bit >>> 3)) >>> (bit & 7) & mask);
            }
          }
          // the rest value by value, least significant bit first, from an accumulator of whole bytes
          long acc = 0;
          int bits = 0;
          for (; k < take; k++) {
            while (bits < w) {
              acc |= (long) (b[q++] & 0xff) << bits;
              bits += 8;
            }
            out[i + k] = (int) (acc & mask);
            acc >>>= w;
            bits -= w;
          }
          p += (int) bytes;
          i += take;
        } else {
          long run = h >>> 1;
          if (to - p < valueBytes) {
            return false;
          }
          int v = 0;
          for (int q = 0; q < valueBytes; q++) {
            v |= (b[p + q] & 0xff) << (8 * q);
          }
          p += valueBytes;
          int take = (int) Math.min(run, n - i);
          java.util.Arrays.fill(out, i, i + take, v);
          i += take;
        }
      }
      return true;
    }
  }
}
