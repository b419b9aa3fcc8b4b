package dev.gpudf.sql.files;

import dev.gpudf.formats.ValueRange;
import dev.gpudf.formats.FileStamp;
import dev.gpudf.formats.ParquetFooter;
import dev.gpudf.formats.ParquetPages;
import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.GpudfException;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import dev.gpudf.kernels.ParquetDecode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * A Parquet file as a {@link ChunkSource}. Opening reads the footer only. Where the footer tells
 * every column (flat columns of the types gpudf's decoder takes, {@link ParquetFooter#columns}) and
 * no row group holds more than {@code chunkRows} rows, a chunk is a run of whole row groups of at
 * most {@code chunkRows} rows, whose columns the readers take as stored pages ({@link
 * #readEncoded}), and Arrow Dataset's native reader is made only if a read needs it (a column whose
 * pages the decoder does not take). Else Arrow's reader is made at opening: the schema is its, and
 * a chunk is a run of consecutive batches of its scan of no columns (whole row groups while they
 * fit the batch size) of at most {@code chunkRows} rows, or one batch where a batch alone holds more
 * (a chunk of one batch takes the batch's buffers as they are, with no copy). Arrow's reader reads
 * chunks in order by one scanner per set of columns, so a query that scans chunk 0, 1, 2 ...
 * decodes each row group once; asking for an earlier chunk starts a new scan. The file's size and
 * modification time are checked before each read: a file that changed since it was opened is an
 * error, never a mix of old and new rows. Each chunk's column ranges come from the row groups'
 * statistics in the footer ({@link ParquetFooter}), for skipping chunks a filter cannot match.
 */
public final class ParquetSource implements ChunkSource {
  /**
   * Rows a batch of the scanner holds at most: a 16th of a chunk, within these bounds. Arrow's
   * native scanner decodes up to 16 batches ahead of the reader, so that it holds about one chunk
   * ahead; with batches of 2^17 rows it held a whole SF1 lineitem's columns (q6 on the CPU backend,
   * 2^18-row chunks: 323 MB of native memory, 102 MB at 2^14, and 0.16 GB less resident).
   */
  private static final int MIN_BATCH_ROWS = 1 << 12;
  private static final int MAX_BATCH_ROWS = 1 << 17;
  private static final int READ_AHEAD_BATCHES = 16;
  /**
   * The string bytes a chunk's column may be charged ({@link ParquetFooter#stringBytes}: a bound
   * on what it holds, or twice an estimate): an Arrow string vector's 2 GiB, as on the device.
   */
  private static final long CHUNK_STRING_BYTES = Integer.MAX_VALUE;
  /**
   * On unless {@code -Dgpudf.files.parquetFooterOpen=false}: a file whose footer tells all its
   * columns ({@link ParquetFooter#columns}) opens from the footer alone, in chunks of whole row
   * groups, and Arrow's native reader (a 76 MB library to load, then a scan of the file to count
   * its batches) is made only if a read needs it.
   */
  static final boolean FROM_FOOTER = Boolean.parseBoolean(System.getProperty("gpudf.files.parquetFooterOpen", "true"));

  private final Path file;
  private final BufferAllocator allocator;
  // Arrow's reader of the file: made at opening where the footer alone cannot tell the columns,
  // else when a read first needs it (a chunk or column the decoder does not take); null before
  private FileSystemDatasetFactory factory;
  private Dataset dataset;
  private final List<String> names = new ArrayList<>();
  private final List<DataType> types = new ArrayList<>();
  private final List<Integer> chunkRows = new ArrayList<>();
  // the batches of Arrow's reader that make each chunk (chunk i is batches firstBatch[i] ..
  // firstBatch[i + 1] - 1); empty until the reader is made
  private final List<Integer> firstBatch = new ArrayList<>();
  private final FileStamp stamp;
  private final int batchRows;
  private final Map<List<Integer>, Stream> streams = new HashMap<>();
  // per chunk, per column: the row groups' statistics merged (null: the footer tells nothing)
  private final List<List<ValueRange>> ranges;
  // per column, the bytes its chunks take in the file (0 where the footer cannot be read)
  private final long[] storedBytes;
  // the footer's row groups (null when it cannot be read), and per chunk the row groups it is made
  // of, first and end (null where a chunk's rows do not start and end on row groups)
  private final List<ParquetFooter.RowGroup> groups;
  private final int[][] groupSpans;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ParquetSource.class);

  /** An open scan over some columns, positioned at the start of chunk {@code next}. */
  private static final class Stream implements AutoCloseable {
    final Scanner scanner;
    final ArrowReader reader;
    int next;

    Stream(Scanner scanner, ArrowReader reader) {
      this.scanner = scanner;
      this.reader = reader;
    }

    @Override
    public void close() {
      try (scanner) {
        reader.close();
      } catch (Exception e) {
        throw new UserException("cannot close a scan: " + e.getMessage(), e);
      }
    }
  }

  private ParquetSource(Path file, BufferAllocator allocator, int chunkRows, long chunkStringBytes, boolean fromFooter)
      throws Exception {
    this.file = file;
    this.allocator = allocator;
    batchRows = Math.max(MIN_BATCH_ROWS, Math.min(MAX_BATCH_ROWS, chunkRows / READ_AHEAD_BATCHES));
    stamp = FileStamp.of(file);
    ParquetFooter.Columns footer = wholeGroups(file, chunkRows, fromFooter);
    if (footer != null) {
      // chunks of whole row groups, each of which the decoder reads as stored pages
      names.addAll(footer.names());
      types.addAll(footer.types());
      groups = footer.groups();
      List<Integer> groupRows = groups.stream().map(g -> (int) g.rows()).toList();
      long[] groupStrings = groups.stream().mapToLong(ParquetFooter.RowGroup::stringBytes).toArray();
      ChunkSource.group(groupRows, chunkRows, groupStrings, chunkStringBytes, this.chunkRows, new ArrayList<>());
    } else {
      try {
        groups = openArrow(chunkRows, chunkStringBytes);
      } catch (Exception e) {
        try (FileSystemDatasetFactory f = factory; Dataset d = dataset) {
          throw e;
        }
      }
    }
    ranges = chunkRanges(groups, names, this.chunkRows);
    groupSpans = spans(groups, this.chunkRows);
    storedBytes = new long[names.size()];
    for (ParquetFooter.RowGroup g : groups == null ? List.<ParquetFooter.RowGroup>of() : groups) {
      for (int c = 0; c < storedBytes.length; c++) {
        storedBytes[c] += g.storedBytes()[c];
      }
    }
  }

  /**
   * {@code file}'s columns from its footer, where it tells them all ({@link
   * ParquetFooter#columns}), {@code fromFooter} is set and no row group holds more than {@code
   * chunkRows} rows (a larger one is read in parts, by Arrow's reader); else null. A footer that
   * cannot be read, or whose row counts disagree, is an error naming the file: Arrow's native
   * reader is never given one, as it sizes allocations by those counts (a damaged one ends the
   * process).
   */
  private static ParquetFooter.Columns wholeGroups(Path file, int chunkRows, boolean fromFooter) {
    ParquetFooter.Columns c = null;
    try {
      if (fromFooter) {
        c = ParquetFooter.columns(file);
      } else {
        ParquetFooter.check(file);
      }
    } catch (IOException | RuntimeException e) {
      throw new UserException("its Parquet footer cannot be read: " + e.getMessage(), e);
    }
    return c == null || c.groups().stream().anyMatch(g -> g.rows() > chunkRows) ? null : c;
  }

  /**
   * Opens Arrow's reader at the file's opening: the columns from its schema, chunks of its
   * batches (whole row groups while they fit the batch size); returns the footer's row groups
   * (null when it cannot be read).
   */
  private List<ParquetFooter.RowGroup> openArrow(int chunkRows, long chunkStringBytes) throws Exception {
    List<Integer> batches = arrowReader();
    for (Field f : factory.inspect().getFields()) {
      names.add(f.getName());
      types.add(ArrowTypes.fromArrow(f));
    }
    List<ParquetFooter.RowGroup> found = footer(file, names, types);
    ChunkSource.group(batches, chunkRows, batchStringBytes(found, batches), chunkStringBytes, this.chunkRows, firstBatch);
    return found;
  }

  /** Makes Arrow's reader of the file; returns its batches' rows, from a scan of no columns. */
  private List<Integer> arrowReader() throws Exception {
    FileSystemDatasetFactory f = new FileSystemDatasetFactory(allocator, NativeMemoryPool.getDefault(), FileFormat.PARQUET,
        file.toAbsolutePath().toUri().toString());
    Dataset d = null;
    try {
      f.inspect();
      d = f.finish();
      List<Integer> batches = new ArrayList<>();
      try (Scanner s = d.newScan(options(new String[0], batchRows)); ArrowReader r = s.scanBatches()) {
        while (r.loadNextBatch()) {
          batches.add(r.getVectorSchemaRoot().getRowCount());
        }
      }
      factory = f;
      dataset = d;
      return batches;
    } catch (Exception e) {
      try (f) {
        if (d != null) {
          d.close();
        }
      }
      throw e;
    }
  }

  /**
   * Arrow's reader for a file opened from its footer, made when a read first needs it: its
   * columns must be the footer's, and its batches must end where the chunks (whole row groups)
   * do, or the file changed since it was opened.
   */
  private void arrowReaderForChunks() {
    List<Integer> batches;
    try {
      batches = arrowReader();
    } catch (UserException e) {
      throw e;
    } catch (Exception e) {
      throw new UserException("cannot read Parquet file " + file + ": " + e.getMessage(), e);
    }
    try {
      List<String> arrowNames = new ArrayList<>();
      List<DataType> arrowTypes = new ArrayList<>();
      for (Field f : factory.inspect().getFields()) {
        arrowNames.add(f.getName());
        arrowTypes.add(ArrowTypes.fromArrow(f));
      }
      if (!arrowNames.equals(names) || !arrowTypes.equals(types)) {
        throw new UserException(file + ": Arrow's reader finds columns " + arrowNames + " of " + arrowTypes
            + " where its footer gave " + names + " of " + types);
      }
      firstBatch.add(0);
      long rows = 0;
      long chunkEnd = 0;
      for (int c = 0, b = 0; c < chunkRows.size(); c++) {
        chunkEnd += chunkRows.get(c);
        while (b < batches.size() && rows < chunkEnd) {
          rows += batches.get(b++);
        }
        if (rows != chunkEnd) {
          throw new UserException(file + ": Arrow's reader gives batches that end at row " + rows
              + ", not at chunk " + c + "'s end, row " + chunkEnd + ": it changed since it was opened");
        }
        firstBatch.add(b);
      }
    } catch (RuntimeException e) {
      // no reader half made: a later read tries again, and fails the same way while the file is so
      firstBatch.clear();
      try (FileSystemDatasetFactory f = factory; Dataset d = dataset) {
        factory = null;
        dataset = null;
      } catch (Exception closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /**
   * Each batch's estimated bytes of its widest string column: its rows at the density of the row
   * group its first row is in ({@link ParquetFooter#stringBytes}); null without a footer.
   */
  private static long[] batchStringBytes(List<ParquetFooter.RowGroup> groups, List<Integer> batches) {
    if (groups == null) {
      return null;
    }
    long[] out = new long[batches.size()];
    int g = 0;
    long groupStart = 0;
    long row = 0;
    for (int b = 0; b < batches.size(); b++) {
      while (g < groups.size() && row >= groupStart + groups.get(g).rows()) {
        groupStart += groups.get(g++).rows();
      }
      if (g < groups.size() && groups.get(g).rows() > 0) {
        ParquetFooter.RowGroup rg = groups.get(g);
        out[b] = (long) Math.ceil((double) rg.stringBytes() / rg.rows() * batches.get(b));
      }
      row += batches.get(b);
    }
    return out;
  }

  /**
   * The row groups of {@code file}'s footer, or null when it cannot be read: statistics only ever
   * skip work, so such a footer is logged and the file is still read.
   */
  private static List<ParquetFooter.RowGroup> footer(Path file, List<String> names, List<DataType> types) {
    try {
      return ParquetFooter.read(file, names, types);
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: no row-group statistics ({}); every chunk is read", file, e.toString());
      return null;
    }
  }

  /** Each chunk's row groups {first, end}, or null for a chunk that does not start and end on row groups. */
  private static int[][] spans(List<ParquetFooter.RowGroup> groups, List<Integer> chunkRows) {
    int[][] out = new int[chunkRows.size()][];
    if (groups == null) {
      return out;
    }
    long[] groupStart = new long[groups.size() + 1];
    for (int g = 0; g < groups.size(); g++) {
      groupStart[g + 1] = groupStart[g] + groups.get(g).rows();
    }
    long start = 0;
    int g = 0;
    for (int c = 0; c < chunkRows.size(); c++) {
      long end = start + chunkRows.get(c);
      while (g < groups.size() && groupStart[g] < start) {
        g++;
      }
      int first = g;
      while (g < groups.size() && groupStart[g + 1] <= end) {
        g++;
      }
      if (groupStart[first] == start && groupStart[g] == end) {
        out[c] = new int[] {first, g};
      }
      start = end;
    }
    return out;
  }

  /**
   * Column {@code column} of chunk {@code chunk} as its stored pages, for the device to decode
   * ({@link ParquetDecode}), read into {@code into} (pinned memory goes to the device with no
   * staging copy); the caller closes it. Null when the device cannot decode it: a chunk that
   * is not whole row groups, or a column {@link ParquetPages#read} leaves to Arrow.
   */
  @Override
  public ParquetDecode.Chunk readEncoded(int chunk, int column, BufferAllocator into) {
    ChunkSource.checkChunk(file, chunkRows, chunk);
    int[] span = groupSpans[chunk];
    if (span == null || column < 0 || column >= names.size()) {
      return null;
    }
    List<ParquetFooter.Stored> stored = new ArrayList<>();
    for (int g = span[0]; g < span[1]; g++) {
      stored.add(groups.get(g).stored().get(column));
    }
    return ParquetPages.read(stamp, stored, span[0], names.get(column), types.get(column), chunkRows.get(chunk), into);
  }

  /** The bytes column {@code column} takes in the file, compressed as stored (0 when the footer does not say). */
  public long storedBytes(int column) {
    return storedBytes[column];
  }

  /**
   * Each chunk's column ranges: the ranges of the row groups its rows come from, merged; null
   * (nothing skipped) when the footer could not be read ({@code groups} null) or its row groups do
   * not add up to the rows the reader found.
   */
  private static List<List<ValueRange>> chunkRanges(List<ParquetFooter.RowGroup> groups, List<String> names,
      List<Integer> chunkRows) {
    long total = chunkRows.stream().mapToLong(Integer::longValue).sum();
    if (groups == null || groups.stream().mapToLong(ParquetFooter.RowGroup::rows).sum() != total) {
      return null;
    }
    List<List<ValueRange>> out = new ArrayList<>();
    long start = 0;
    for (int rows : chunkRows) {
      long end = start + rows;
      List<ValueRange> merged = null;
      long groupStart = 0;
      for (ParquetFooter.RowGroup group : groups) {
        // every row group with a row in [start, end): a group may span chunks, a chunk groups
        if (groupStart < end && groupStart + group.rows() > start) {
          merged = merged == null ? group.ranges() : union(merged, group.ranges());
        }
        groupStart += group.rows();
      }
      out.add(merged == null ? java.util.Collections.nCopies(names.size(), (ValueRange) null) : merged);
      start = end;
    }
    return out;
  }

  /** Whether Arrow's reader of the file has been made (at opening, or by a read that needed it). */
  boolean arrowReaderMade() {
    return dataset != null;
  }

  /**
   * Opens {@code file} (its footer only); the caller owns the source. A missing, unreadable or
   * non-Parquet file, or a column of a type gpudf does not store, is an error naming the file.
   */
  public static ParquetSource open(Path file, BufferAllocator allocator, int chunkRows) {
    return open(file, allocator, chunkRows, CHUNK_STRING_BYTES);
  }

  /** As {@link #open(Path, BufferAllocator, int)}, a chunk's estimated string bytes per column at most {@code chunkStringBytes}. */
  static ParquetSource open(Path file, BufferAllocator allocator, int chunkRows, long chunkStringBytes) {
    return open(file, allocator, chunkRows, chunkStringBytes, FROM_FOOTER);
  }

  /** As {@link #open(Path, BufferAllocator, int, long)}, from the footer where it can be or through Arrow's reader. */
  static ParquetSource open(Path file, BufferAllocator allocator, int chunkRows, long chunkStringBytes, boolean fromFooter) {
    if (!Files.isRegularFile(file)) {
      throw new UserException("no file " + file);
    }
    try {
      return new ParquetSource(file, allocator, Math.max(1, chunkRows), Math.max(1, chunkStringBytes), fromFooter);
    } catch (GpudfException e) {
      throw new UserException(file + ": " + e.getMessage(), e);
    } catch (Exception e) {
      // the native reader reports a damaged or foreign file as a RuntimeException
      throw new UserException("cannot read Parquet file " + file + ": " + e.getMessage(), e);
    }
  }

  private static List<ValueRange> union(List<ValueRange> a, List<ValueRange> b) {
    List<ValueRange> out = new ArrayList<>();
    for (int c = 0; c < a.size(); c++) {
      out.add(a.get(c) == null || b.get(c) == null ? null : a.get(c).union(b.get(c)));
    }
    return out;
  }

  @Override
  public ValueRange range(int chunk, int column) {
    return ranges == null ? null : ranges.get(chunk).get(column);
  }

  private static ScanOptions options(String[] columns, int batchRows) {
    return new ScanOptions.Builder(batchRows).columns(Optional.of(columns)).build();
  }

  @Override
  public void check(int chunk) {
    ChunkSource.checkChunk(file, chunkRows, chunk);
    stamp.check();
  }

  @Override
  public List<String> names() {
    return names;
  }

  @Override
  public List<DataType> types() {
    return types;
  }

  @Override
  public List<Integer> chunkRows() {
    return chunkRows;
  }

  @Override
  public VectorSchemaRoot read(int chunk, int[] columns, BufferAllocator into) {
    ChunkSource.checkChunk(file, chunkRows, chunk);
    if (columns.length == 0) {
      return ChunkSource.rowsOnly(chunkRows.get(chunk), into);
    }
    stamp.check();
    List<Integer> key = java.util.Arrays.stream(columns).boxed().toList();
    try {
      Stream s = streams.get(key);
      if (s != null && s.next > chunk) {
        // a stream only goes forward: an earlier chunk starts a new one
        streams.remove(key).close();
        s = null;
      }
      if (s == null) {
        if (dataset == null) {
          arrowReaderForChunks();
        }
        String[] picked = key.stream().map(names::get).toArray(String[]::new);
        Scanner scanner = dataset.newScan(options(picked, batchRows));
        try {
          s = new Stream(scanner, scanner.scanBatches());
        } catch (RuntimeException e) {
          try {
            scanner.close();
          } catch (Exception closing) {
            e.addSuppressed(closing);
          }
          throw e;
        }
        streams.put(key, s);
      }
      // a later chunk than the stream's next (chunks that statistics skipped, say) is reached by
      // reading on, not by starting over: each batch of the file is decoded at most once per stream
      for (int b = firstBatch.get(s.next); b < firstBatch.get(chunk); b++) {
        if (!s.reader.loadNextBatch()) {
          throw new UserException(file + " ended before chunk " + chunk + ": it changed since it was opened");
        }
      }
      s.next = chunk;
      VectorSchemaRoot root = Batches.append(s.reader, into, firstBatch.get(chunk + 1) - firstBatch.get(chunk),
          chunkRows.get(chunk), file.toString());
      s.next = chunk + 1;
      if (s.next == chunkRows.size()) {
        streams.remove(key).close();
      }
      if (root.getRowCount() != chunkRows.get(chunk)) {
        int got = root.getRowCount();
        root.close();
        throw new UserException(file + " chunk " + chunk + " holds " + got + " rows where its footer said "
            + chunkRows.get(chunk) + ": it changed since it was opened");
      }
      return root;
    } catch (UserException e) {
      dropStream(key);
      throw e;
    } catch (IOException | RuntimeException e) {
      dropStream(key);
      throw new UserException("cannot read Parquet file " + file + " (chunk " + chunk + "): " + e.getMessage(), e);
    }
  }

  private void dropStream(List<Integer> key) {
    Stream s = streams.remove(key);
    if (s != null) {
      s.close();
    }
  }

  @Override
  public void close() {
    UserException first = null;
    for (Stream s : streams.values()) {
      try {
        s.close();
      } catch (UserException e) {
        first = first == null ? e : first;
      }
    }
    streams.clear();
    try (FileSystemDatasetFactory f = factory; Dataset d = dataset) {
      // both closed, the dataset first
    } catch (Exception e) {
      throw new UserException("cannot close Parquet file " + file + ": " + e.getMessage(), e);
    }
    if (first != null) {
      throw first;
    }
  }
}
