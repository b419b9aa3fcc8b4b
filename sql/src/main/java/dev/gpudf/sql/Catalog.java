package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.TableOps;
import dev.gpudf.sql.files.ChunkSource;
import dev.gpudf.sql.files.TableNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The session's tables, resident in the backend's memory (on the device for a GPU session) and
 * reused by every query. Names are case-insensitive. A table is one or more chunks of rows: rows
 * {@linkplain #append appended} join the last chunk while its string columns stay within a
 * column's 2 GiB (32-bit offsets) and its rows within {@link #maxChunkRows}, and start a new
 * chunk past that, so a table may hold more than one column could; a query reads a chunked table
 * as the UNION ALL of its chunks. A GPU catalog keeps its tables within a {@linkplain
 * #deviceBudget(long) device budget} by spilling the columns read least recently to host memory,
 * and brings them back when a query reads them. The catalog holds one reference to each column
 * and closes them when it closes.
 */
public final class Catalog implements AutoCloseable {
  private final Gpu gpu;
  private final BufferAllocator allocator;
  private java.nio.file.Path dataDirectory;
  private final Map<String, Entry> tables = new LinkedHashMap<>();
  private int maxChunkRows = Integer.MAX_VALUE;
  private long deviceBudget;
  // a clock of reads, for spilling the least recently read columns first
  private long tick;
  /** The most bytes a chunk's string column holds: 32-bit offsets, on the host (Arrow) and the device. */
  public static final long CHUNK_STRING_BYTES = Integer.MAX_VALUE;
  private static final String HIDDEN = "$frame";
  private final Map<String, TableConstraints> constraints = new java.util.HashMap<>();
  private final Map<String, String> indexes = new java.util.HashMap<>();
  // bumped at every change of a table's rows, so a writer of files can tell what changed
  private final Map<String, Long> versions = new java.util.HashMap<>();
  // the version at which each table's rows were last defined whole (registered or replaced): later
  // versions only appended rows
  private final Map<String, Long> defined = new java.util.HashMap<>();
  private long version;
  private int hidden;
  // reads chunks of file tables ahead of their scans (readAhead), one at a time: started lazily
  private java.util.concurrent.ExecutorService reader;

  /** A catalog whose tables live on {@code gpu}, or on the host when it is null; chunks are joined with {@code allocator}'s memory. */
  Catalog(Gpu gpu, BufferAllocator allocator) {
    this.gpu = gpu;
    this.allocator = allocator;
    this.deviceBudget = gpu == null ? Long.MAX_VALUE : gpu.pool().limit() / 3 * 2;
  }

  /** Rows a chunk may hold before {@link #append} starts another (default: as many as a column can). */
  public synchronized int maxChunkRows() {
    return maxChunkRows;
  }

  /** Sets {@link #maxChunkRows} for later appends (smaller chunks bound the memory a query needs per chunk). */
  public synchronized void maxChunkRows(int rows) {
    if (rows < 1) {
      throw new UserException("a chunk holds at least one row, not " + rows);
    }
    maxChunkRows = rows;
  }

  /**
   * One table: its chunks, and the appended parts that will join the last chunk, kept apart
   * until the chunk is next read or closed to appends so that many small appends concatenate
   * once rather than each time.
   */
  private static final class Entry {
    final List<CatalogChunk> chunks = new ArrayList<>();
    final List<Table<?>> pending = new ArrayList<>();
    // a table kept in its files: no chunks here, each scan reads its chunk from the source
    final ChunkSource source;
    // a table kept in its files, on a GPU catalog: per chunk, the columns read so far (null
    // until one is), kept on the device for later scans within the budget
    final CatalogChunk[] read;
    // set when the entry is closed, under the source's lock: a read ahead queued before then finds
    // its source gone and fails instead of reading a closed file
    private boolean closed;
    // the last read ahead of this table started (under the catalog's lock): the next starts when it
    // has ended, so a table's reads ahead run in the order asked (a source read in order decodes
    // each part once, ParquetSource) while other tables' run beside them
    java.util.concurrent.CompletableFuture<?> lastReadAhead = java.util.concurrent.CompletableFuture.completedFuture(null);

    /** Takes {@code first}, which it closes. */
    Entry(Table<?> first) {
      source = null;
      read = new CatalogChunk[0];
      try (first) {
        chunks.add(new CatalogChunk(first));
      }
    }

    /** Takes {@code source}, which it closes. */
    Entry(ChunkSource source) {
      this.source = source;
      read = new CatalogChunk[source.chunkRows().size()];
    }

    /** The chunks holding columns now: a resident table's, or those read of a file table's. */
    List<CatalogChunk> held() {
      if (source == null) {
        return chunks;
      }
      return java.util.Arrays.stream(read).filter(java.util.Objects::nonNull).toList();
    }

    CatalogChunk last() {
      return chunks.get(chunks.size() - 1);
    }

    Shape shape() {
      if (source != null) {
        return new Shape(source.names(), source.types(), source.chunkRows(), ranges(source));
      }
      List<Integer> rows = new ArrayList<>(chunks.stream().map(CatalogChunk::rows).toList());
      // pending parts are rows of the last chunk
      rows.set(rows.size() - 1, rows.get(rows.size() - 1) + pending.stream().mapToInt(Table::rowCount).sum());
      return new Shape(chunks.get(0).names(), chunks.get(0).types(), rows, null);
    }

    /** What {@code source}'s metadata says of each chunk's columns, or null when it says nothing. */
    private static List<List<dev.gpudf.formats.ValueRange>> ranges(ChunkSource source) {
      List<List<dev.gpudf.formats.ValueRange>> out = new ArrayList<>();
      boolean any = false;
      for (int c = 0; c < source.chunkRows().size(); c++) {
        List<dev.gpudf.formats.ValueRange> chunk = new ArrayList<>();
        for (int k = 0; k < source.names().size(); k++) {
          dev.gpudf.formats.ValueRange r = source.range(c, k);
          any |= r != null;
          chunk.add(r);
        }
        out.add(java.util.Collections.unmodifiableList(chunk));
      }
      return any ? List.copyOf(out) : null;
    }

    /**
     * Columns {@code columns} of chunk {@code chunk} from the source, into {@code into}, as stored
     * pages decoding on {@code gpu} where it is not null and the source can ({@link ChunkColumns});
     * the caller closes them.
     * One read of a table at a time: the catalog's reader threads read ahead (see {@link
     * #readAhead}) while scans read too (a GPU catalog's under its lock, a host catalog's outside it).
     */
    ChunkColumns readColumns(int chunk, int[] columns, BufferAllocator into, Gpu gpu) {
      synchronized (source) {
        if (closed) {
          throw new UserException("a table kept in files was dropped or replaced while its chunk " + chunk + " was read");
        }
        return ChunkColumns.read(source, chunk, columns, into, gpu);
      }
    }

    void close() {
      held().forEach(CatalogChunk::close);
      pending.forEach(Table::close);
      if (source != null) {
        synchronized (source) {
          closed = true;
          source.close();
        }
      }
    }
  }

  /** Loads {@code root} as table {@code name} (copied to the device for a GPU session); the caller keeps {@code root}. */
  public synchronized void register(String name, VectorSchemaRoot root) {
    add(name, () -> TableOps.load(gpu, root));
  }

  /** Table {@code name}, new, made of {@code rows} (called once the name is known to be free; the entry takes what it returns). */
  private void add(String name, java.util.function.Supplier<Table<?>> rows) {
    TableNames.check(name);
    String key = name.toLowerCase(Locale.ROOT);
    if (tables.containsKey(key)) {
      throw new UserException("table '" + name + "' already exists");
    }
    tables.put(key, new Entry(rows.get()));
    versions.put(key, ++version);
    defined.put(key, version);
    spillToBudget(0, null);
  }

  /** Table {@code name}, existing, with its rows replaced by {@code rows} (made first: if that fails, the table keeps its old rows). */
  private void swap(String name, java.util.function.Supplier<Table<?>> rows) {
    String key = name.toLowerCase(Locale.ROOT);
    if (!tables.containsKey(key)) {
      throw new UserException("no table '" + name + "'");
    }
    tables.put(key, new Entry(rows.get())).close();
    versions.put(key, ++version);
    defined.put(key, version);
    spillToBudget(0, null);
  }

  /**
   * Takes {@code table} (rows already on this catalog's device, checked by the caller: a device
   * hand-off's import) as table {@code name}; the caller keeps its own reference to {@code table}.
   */
  public synchronized void register(String name, DeviceTable table) {
    add(name, () -> onThisDevice(table));
  }

  /** Replaces the rows of existing table {@code name} by {@code table}, as {@link #register(String, DeviceTable)} takes it. */
  public synchronized void replace(String name, DeviceTable table) {
    swap(name, () -> onThisDevice(table));
  }

  /** {@link #register(String, DeviceTable)} under a new hidden name, which it returns. */
  synchronized String registerHidden(DeviceTable table) {
    String name = HIDDEN + (++hidden);
    register(name, table);
    return name;
  }

  /** {@code table} with a new reference for an entry to take, once it is known to live on this catalog's device. */
  private DeviceTable onThisDevice(DeviceTable table) {
    if (gpu == null || table.gpu() != gpu) {
      throw new InternalException("a device table from another GPU context (or for a host catalog) cannot become a table here");
    }
    table.retain();
    return table;
  }

  /**
   * Registers table {@code name} kept in files: its shape comes from {@code source} now, its rows
   * when a query scans them, one chunk at a time and only the columns the query reads (they are
   * not kept: each query reads them again). Rows appended to it make it resident (read whole); its
   * files are never written. The catalog owns {@code source} from here on, and
   * closes it when the table is dropped or replaced, or here if the name is taken.
   */
  public synchronized void register(String name, ChunkSource source) {
    String key = name.toLowerCase(Locale.ROOT);
    try {
      TableNames.check(name);
    } catch (UserException e) {
      source.close();
      throw e;
    }
    if (tables.containsKey(key)) {
      source.close();
      throw new UserException("table '" + name + "' already exists");
    }
    tables.put(key, new Entry(source));
    versions.put(key, ++version);
    defined.put(key, version);
  }

  /** Whether the tables live on a GPU. */
  boolean onGpu() {
    return gpu != null;
  }

  /** Pins {@code bytes} of host memory ahead of reads, in the background, on the GPU ({@link Gpu#reservePinned}); nothing on the CPU. */
  void reservePinned(long bytes) {
    if (gpu != null && bytes > 0) {
      gpu.reservePinned(bytes);
    }
  }

  /** The bytes the GPU's memory pool may hold (0 on the CPU). */
  long devicePoolBytes() {
    return gpu == null ? 0 : gpu.pool().limit();
  }

  /** Sets the directory whose files are this catalog's tables, and where COPY ... TO writes. */
  public synchronized void dataDirectory(java.nio.file.Path dir) {
    dataDirectory = dir;
  }

  /** The directory set by {@link #dataDirectory(java.nio.file.Path)}, or null. */
  public synchronized java.nio.file.Path dataDirectory() {
    return dataDirectory;
  }

  /** Whether table {@code name} is kept in files (rows read per query) rather than resident. */
  synchronized boolean inFiles(String name) {
    Entry e = tables.get(name.toLowerCase(Locale.ROOT));
    return e != null && e.source != null;
  }

  /**
   * Adds the rows of {@code root} (copied, as for {@link #register}) to the end of table {@code
   * name}, whose column types they must have; the caller keeps {@code root}. They join the last
   * chunk while that stays within a chunk's limits, else they become a new chunk.
   */
  public synchronized void append(String name, VectorSchemaRoot root) {
    appendPart(name, () -> TableOps.load(gpu, root));
  }

  /**
   * {@link #append(String, VectorSchemaRoot)} of rows already on this catalog's device (no host
   * copy); the caller keeps its reference to {@code rows}.
   */
  public synchronized void append(String name, DeviceTable rows) {
    appendPart(name, () -> onThisDevice(rows));
  }

  /** Appends the rows {@code made} gives (the caller's part: closed here) to table {@code name}. */
  private void appendPart(String name, java.util.function.Supplier<Table<?>> made) {
    String key = name.toLowerCase(Locale.ROOT);
    Entry e = tables.get(key);
    if (e == null) {
      throw new UserException("no table '" + name + "'");
    }
    if (e.source != null) {
      // rows added to a table kept in files: it becomes resident (its files stay as they are)
      e = resident(key, e);
    }
    Table<?> part = made.get();
    try (Exec exec = exec()) {
      List<String> names = e.last().names();
      if (!part.types().equals(e.last().types())) {
        throw new UserException("rows appended to '" + name + "' have column types " + part.types() + ", the table has "
            + e.last().types());
      }
      if (fitTogether(e, part)) {
        part.retain();
        e.pending.add(part);
      } else {
        mergePending(e, exec);
        // a chunk carries the table's column names, whatever the appended rows were called
        try (Table<?> named = TableOps.renamed(exec, part, names)) {
          e.chunks.add(new CatalogChunk(named));
        }
      }
    } finally {
      part.close();
    }
    versions.put(key, ++version);
    spillToBudget(0, null);
  }

  private Exec exec() {
    return gpu == null ? Exec.onCpu(allocator) : Exec.onGpu(gpu, allocator);
  }

  /** Table {@code key}, kept in files by {@code e}, read whole into a resident entry that replaces it. */
  private Entry resident(String key, Entry e) {
    Entry made = null;
    int[] all = java.util.stream.IntStream.range(0, e.source.names().size()).toArray();
    try {
      for (int c = 0; c < e.source.chunkRows().size(); c++) {
        try (ChunkColumns read = e.readColumns(c, all, allocator, null); HostTable host = read.table(null);
            Table<?> chunk = TableOps.load(gpu, host)) {
          if (made == null) {
            chunk.retain();
            made = new Entry(chunk);
          } else {
            made.chunks.add(new CatalogChunk(chunk));
          }
        }
      }
    } catch (RuntimeException ex) {
      if (made != null) {
        made.close();
      }
      throw ex;
    }
    tables.put(key, made);
    e.close();
    return made;
  }

  /** Concatenates {@code e}'s pending parts into its last chunk, in one copy. */
  private void mergePending(Entry e, Exec exec) {
    if (e.pending.isEmpty()) {
      return;
    }
    CatalogChunk last = e.last();
    List<Table<?>> parts = new ArrayList<>();
    parts.add(read(last, last.allColumns()));
    parts.addAll(e.pending);
    try (Table<?> joined = TableOps.concat(exec, parts, last.names())) {
      if (exec.hasGpu()) {
        exec.stream().synchronize();
      }
      e.chunks.set(e.chunks.size() - 1, new CatalogChunk(joined));
    } finally {
      parts.forEach(Table::close);
    }
    last.close();
    e.pending.clear();
  }

  /** Whether {@code part} joins {@code e}'s last chunk (with its pending parts) within the limits: rows, and each string column's bytes. */
  private boolean fitTogether(Entry e, Table<?> part) {
    List<Table<?>> parts = new ArrayList<>(e.pending);
    parts.add(part);
    if (e.last().rows() + parts.stream().mapToLong(Table::rowCount).sum() > maxChunkRows) {
      return false;
    }
    for (int c = 0; c < part.columnCount(); c++) {
      int column = c;
      if (part.types().get(c).id() == TypeId.STRING
          && e.last().stringBytes(c) + parts.stream().mapToLong(t -> stringBytes(t, column)).sum() > CHUNK_STRING_BYTES) {
        return false;
      }
    }
    return true;
  }

  private static long stringBytes(Table<?> t, int c) {
    if (t instanceof DeviceTable d) {
      return d.column(c).data().size();
    }
    return ((BaseVariableWidthVector) ((HostTable) t).column(c).vector()).sizeOfValueBuffer();
  }

  /**
   * Loads {@code root} as a table that {@link #names} does not list (the rows of a DataFrame
   * made from Arrow or a file) and returns its generated name; the caller keeps {@code root}.
   */
  synchronized String registerHidden(VectorSchemaRoot root) {
    String name = HIDDEN + (++hidden);
    register(name, root);
    return name;
  }

  /** {@link #register(String, ChunkSource)} under a new hidden name, which it returns. */
  synchronized String registerHidden(ChunkSource source) {
    String name = HIDDEN + (++hidden);
    register(name, source);
    return name;
  }

  /** Replaces the rows of existing table {@code name} by {@code root} (copied, as for {@link #register}); the caller keeps {@code root}. */
  public synchronized void replace(String name, VectorSchemaRoot root) {
    swap(name, () -> TableOps.load(gpu, root));
  }

  /** Removes and closes table {@code name}, with its constraints and indexes. */
  public synchronized void drop(String name) {
    String key = name.toLowerCase(Locale.ROOT);
    Entry t = tables.remove(key);
    if (t == null) {
      throw new UserException("no table '" + name + "'");
    }
    constraints.remove(key);
    indexes.values().removeIf(key::equals);
    versions.remove(key);
    defined.remove(key);
    t.close();
  }

  /**
   * The version (see {@link #versions}) at which table {@code name}'s rows were last defined whole,
   * by {@link #register} or {@link #replace}: every later version only appended rows to them.
   */
  public synchronized long definedAt(String name) {
    Long v = defined.get(name.toLowerCase(Locale.ROOT));
    if (v == null) {
      throw new UserException("no table '" + name + "'");
    }
    return v;
  }

  /**
   * The bytes that scans {@code scans} read at least: each column of each chunk they name, once
   * however many scans read it, as the backend stores it now ({@link CatalogChunk#storedBytes}).
   * A column of a file table not held now counts 0: its size in memory is not known until it is
   * read (a host catalog reads file columns anew for each scan and holds none).
   */
  synchronized long scanBytes(java.util.Collection<CatalogTable> scans) {
    java.util.Set<String> seen = new java.util.HashSet<>();
    long bytes = 0;
    for (CatalogTable t : scans) {
      Entry e = tables.get(t.name().toLowerCase(Locale.ROOT));
      if (e == null) {
        continue;
      }
      int chunks = e.source != null ? e.read.length : e.chunks.size();
      int from = t.chunk() < 0 ? 0 : t.chunk();
      int to = t.chunk() < 0 ? chunks : Math.min(chunks, t.chunk() + 1);
      for (int k = from; k < to; k++) {
        CatalogChunk c = e.source != null ? e.read[k] : e.chunks.get(k);
        if (c == null) {
          continue;
        }
        int[] columns = t.columns() != null ? t.columns() : c.allColumns();
        for (int col : columns) {
          if (seen.add(t.name() + '\0' + k + '\0' + col)) {
            bytes += c.storedBytes(col);
            if (e.source == null && k == chunks - 1) {
              // appended rows not yet joined to the last chunk
              for (Table<?> part : e.pending) {
                bytes += CatalogChunk.storedBytes(part.column(col));
              }
            }
          }
        }
      }
    }
    return bytes;
  }

  /** How many rows table {@code name} holds. */
  public synchronized long rowCount(String name) {
    return shape(name).chunkRows().stream().mapToLong(Integer::longValue).sum();
  }

  /**
   * The rows of resident table {@code name} from row {@code from} on, in the order they were
   * added (what was appended since it held {@code from} rows), as one Arrow root the caller
   * closes; none past its end.
   */
  public synchronized VectorSchemaRoot rowsFrom(String name, long from, BufferAllocator into) {
    String key = name.toLowerCase(Locale.ROOT);
    Entry e = tables.get(key);
    if (e == null) {
      throw new UserException("no table '" + name + "'");
    }
    if (e.source != null) {
      throw new UserException("table '" + name + "' is kept in files: its rows are not held here");
    }
    List<Table<?>> parts = new ArrayList<>();
    try (Exec exec = exec()) {
      mergePending(e, exec);
      long start = 0;
      for (CatalogChunk c : e.chunks) {
        long end = start + c.rows();
        if (end > from || (parts.isEmpty() && c == e.last())) {
          int skip = (int) Math.max(0, Math.min(c.rows(), from - start));
          try (Table<?> whole = read(c, c.allColumns())) {
            parts.add(TableOps.slice(exec, whole, skip, c.rows() - skip));
          }
        }
        start = end;
      }
      try (Table<?> rows = parts.size() == 1 ? retained(parts.get(0)) : TableOps.concat(exec, parts, e.last().names())) {
        return rows instanceof DeviceTable d ? d.toArrow(into, exec.stream()) : ((HostTable) rows).toArrow(into);
      }
    } finally {
      parts.forEach(Table::close);
    }
  }

  private static Table<?> retained(Table<?> t) {
    t.retain();
    return t;
  }

  /** What table {@code name} promises about its rows ({@link TableConstraints#NONE} unless declared). */
  synchronized TableConstraints constraints(String name) {
    return constraints.getOrDefault(name.toLowerCase(Locale.ROOT), TableConstraints.NONE);
  }

  /** Declares what table {@code name} promises; the caller has checked that its rows keep it. */
  synchronized void constrain(String name, TableConstraints c) {
    constraints.put(name.toLowerCase(Locale.ROOT), c);
  }

  /** Whether index {@code index} (lower case) exists; indexes are recorded, unused by plans, so DROP INDEX and name clashes behave. */
  synchronized boolean hasIndex(String index) {
    return indexes.containsKey(index);
  }

  /** Records index {@code index} (lower case) on table {@code table}; a taken name is a {@link UserException}. */
  synchronized void addIndex(String index, String table) {
    if (indexes.putIfAbsent(index, table) != null) {
      throw new UserException("index '" + index + "' already exists");
    }
  }

  /** Forgets index {@code index} (lower case) and returns its table, or null if there was none. */
  synchronized String dropIndex(String index) {
    return indexes.remove(index);
  }

  /** The tables' names (lower case), in the order they were registered. */
  public synchronized List<String> names() {
    return tables.keySet().stream().filter(n -> !n.startsWith(HIDDEN)).toList();
  }

  /** Each listed table's version: a number that changes whenever its rows are replaced. */
  public synchronized Map<String, Long> versions() {
    Map<String, Long> out = new java.util.TreeMap<>(versions);
    out.keySet().removeIf(n -> n.startsWith(HIDDEN));
    return out;
  }

  /** Table {@code name}'s version (see {@link #versions}); a {@link UserException} if there is no such table. */
  synchronized long version(String name) {
    Long v = versions.get(name.toLowerCase(Locale.ROOT));
    if (v == null) {
      throw new UserException("no table '" + name + "'");
    }
    return v;
  }

  /** What the planner needs of a table: its columns and the rows of each of its chunks. */
  /**
   * A table's columns and rows per chunk, and for a table kept in files what their metadata says
   * of each chunk's columns ({@code ranges}: per chunk, per column, null entries unknown; null when
   * nothing is known).
   */
  record Shape(List<String> names, List<dev.gpudf.columnar.DataType> types, List<Integer> chunkRows,
      List<List<dev.gpudf.formats.ValueRange>> ranges) {
    long rows() {
      return chunkRows.stream().mapToLong(Integer::longValue).sum();
    }

    int chunks() {
      return chunkRows.size();
    }
  }

  /** Every table's {@link Shape}, by name (lower case, hidden tables included). */
  synchronized Map<String, Shape> shapes() {
    Map<String, Shape> out = new LinkedHashMap<>();
    tables.forEach((name, e) -> out.put(name, e.shape()));
    return out;
  }

  /** Table {@code name}'s {@link Shape}; a {@link UserException} if there is no such table. */
  synchronized Shape shape(String name) {
    Entry e = tables.get(name.toLowerCase(Locale.ROOT));
    if (e == null) {
      throw new UserException("no table '" + name + "'");
    }
    return e.shape();
  }

  /**
   * Columns {@code columns} (all when null) of chunk {@code chunk} of table {@code name}, retained
   * for the caller, who closes the table; spilled columns come back to the device first.
   */
  Table<?> acquire(String name, int chunk, int[] columns) {
    return acquire(name, chunk, columns, null);
  }

  /**
   * {@link #acquire(String, int, int[])}, taking the rows of {@code ahead} (null: none) when it
   * read the columns the chunk lacks now; closes {@code ahead} either way.
   */
  Table<?> acquire(String name, int chunk, int[] columns, ChunkRead ahead) {
    try (ahead) {
      Entry e;
      int[] read;
      synchronized (this) {
        e = tables.get(name.toLowerCase(Locale.ROOT));
        if (e == null) {
          throw new UserException("no table '" + name + "'");
        }
        if (e.source == null) {
          return fromResident(e, name, chunk, columns);
        }
        read = columns != null ? columns : allColumns(e);
        if (gpu != null) {
          return fromFile(e, chunk, read, ahead);
        }
      }
      // the host backend reads each scan anew: its memory holds only what queries run on, and the
      // read needs none of the catalog's state, so it runs outside the catalog's lock: a query
      // reading one table does not hold up another's plan or reads (reads of one table wait for
      // each other at its source, Entry.readColumns, which also fails one of a table dropped
      // meanwhile). A read of more columns (one started while the statement was planned) serves
      // those it has.
      if (ahead != null && !ahead.reads(e, chunk, read) && ahead.covers(e, chunk, read)) {
        readsAheadTaken.incrementAndGet();
        try (ChunkColumns got = ahead.take()) {
          return got.table(read);
        }
      }
      try (ChunkColumns got = columns(e, chunk, read, allocator, ahead)) {
        return got.table(null);
      }
    }
  }

  /**
   * Starts reading, on a reader thread of the catalog after the table's reads ahead started
   * before it, the columns {@code columns} (all when null) of chunk {@code chunk} of table {@code
   * name} that a scan will need: those not on the device for a GPU catalog, all of them for a CPU
   * one. Null when there is nothing to read: the table is resident, or every column is. The
   * caller owns the read and hands it to {@link #acquire}.
   */
  synchronized ChunkRead readAhead(String name, int chunk, int[] columns) {
    Entry e = tables.get(name.toLowerCase(Locale.ROOT));
    if (!READ_AHEAD || e == null || e.source == null || chunk < 0 || chunk >= e.read.length) {
      return null;
    }
    int[] read = columns != null ? columns : allColumns(e);
    int[] wanted = gpu == null ? read : absent(e, chunk, read);
    if (wanted.length == 0) {
      return null;
    }
    BufferAllocator into = gpu == null ? allocator : gpu.pinnedAllocator();
    if (reader == null) {
      java.util.concurrent.ThreadFactory threads = r -> {
        Thread t = new Thread(r, "gpudf-chunk-reader");
        t.setDaemon(true);
        return t;
      };
      // a host catalog's reads ahead of different tables each on a thread (one table's follow each
      // other, Entry.lastReadAhead, and a fixed number of threads would let one table's queue hold
      // up other tables' reads); a GPU catalog's on one, as it uploads what it read under its lock
      // in any case, and more threads there were not measured
      reader = gpu == null ? java.util.concurrent.Executors.newCachedThreadPool(threads)
          : java.util.concurrent.Executors.newSingleThreadExecutor(threads);
    }
    readsAheadStarted++;
    java.util.concurrent.CompletableFuture<ChunkColumns> rows = e.lastReadAhead
        .handle((before, failed) -> null)
        .thenApplyAsync(none -> e.readColumns(chunk, wanted, into, gpu), reader);
    e.lastReadAhead = rows;
    return new ChunkRead(e, chunk, wanted, rows);
  }

  private static int[] allColumns(Entry e) {
    return java.util.stream.IntStream.range(0, e.source.names().size()).toArray();
  }

  /** Those of {@code columns} that chunk {@code chunk} of file table {@code e} does not hold on the device now, each once. */
  private static int[] absent(Entry e, int chunk, int[] columns) {
    CatalogChunk c = e.read[chunk];
    return c == null ? java.util.Arrays.stream(columns).distinct().toArray() : c.absent(columns);
  }

  /**
   * Columns {@code wanted} of chunk {@code chunk} of {@code e} (as stored pages where a GPU
   * catalog's source can): {@code ahead}'s when it read them, else read now.
   */
  private ChunkColumns columns(Entry e, int chunk, int[] wanted, BufferAllocator into, ChunkRead ahead) {
    if (ahead != null && ahead.reads(e, chunk, wanted)) {
      readsAheadTaken.incrementAndGet();
      return ahead.take();
    }
    return e.readColumns(chunk, wanted, into, gpu);
  }

  /** {@link #acquire} of resident table {@code e}. */
  private Table<?> fromResident(Entry e, String name, int chunk, int[] columns) {
    List<CatalogChunk> chunks = e.chunks;
    if (chunk == chunks.size() - 1 && !e.pending.isEmpty()) {
      try (Exec exec = exec()) {
        mergePending(e, exec);
      }
    }
    if (chunk >= chunks.size()) {
      throw new InternalException("table '" + name + "' has " + chunks.size() + " chunks, not " + (chunk + 1)
          + ": a plan outlived the table's shape");
    }
    CatalogChunk c = chunks.get(chunk);
    return read(c, columns != null ? columns : c.allColumns());
  }

  /**
   * Columns {@code columns} of chunk {@code chunk} of file table {@code e} on the device: those
   * read before, if their file has not changed since (else the source's error), and the others
   * read now and kept; the caller closes the table.
   */
  private Table<?> fromFile(Entry e, int chunk, int[] columns, ChunkRead ahead) {
    e.source.check(chunk);
    int[] absent = absent(e, chunk, columns);
    if (e.read[chunk] == null) {
      e.read[chunk] = CatalogChunk.ofFile(e.source.names(), e.source.types(), e.source.chunkRows().get(chunk));
    }
    CatalogChunk c = e.read[chunk];
    if (absent.length > 0) {
      // a read started with the query, of the columns all its scans of this chunk take, fills them all
      int[] reading = ahead != null && ahead.covers(e, chunk, absent) ? ahead.columns() : absent;
      int[] again = java.util.Arrays.stream(reading).filter(c::dropped).toArray();
      // into pinned memory: its pool is touched once, not page by page per chunk as fresh host
      // memory is (most of a scan's time), and it goes to the device with no staging copy
      long decoded;
      long stored;
      try (ChunkColumns read = columns(e, chunk, reading, gpu.pinnedAllocator(), ahead);
          Table<?> t = read.load(gpu, e.source.names())) {
        c.fill(reading, t);
        decoded = read.decodedOnDevice();
        stored = read.storedBytes();
      }
      fileReads = new FileReads(fileReads.columnChunks() + reading.length, fileReads.bytes() + c.deviceBytes(reading),
          fileReads.rereadColumnChunks() + again.length, fileReads.rereadBytes() + c.deviceBytes(again),
          fileReads.decodedOnDevice() + decoded, fileReads.storedBytes() + stored,
          fileReads.rows() + e.source.chunkRows().get(chunk));
    }
    return read(c, columns);
  }

  /** Columns {@code columns} of {@code c} for a reader, who closes the table, after making room for those spilled. */
  private Table<?> read(CatalogChunk c, int[] columns) {
    spillToBudget(c.spilledDeviceBytes(columns), c);
    return c.table(gpu, columns, ++tick);
  }

  /** The device bytes the catalog's tables may hold (see {@link #deviceBudget(long)}). */
  public synchronized long deviceBudget() {
    return deviceBudget;
  }

  /**
   * Sets the device bytes the tables may hold (default: two thirds of the GPU's memory pool, so
   * that a third is left to queries). Past it, the least recently read columns that no query is
   * reading now are copied to host memory and freed on the device, largest first among those
   * never read, and come back when a query reads them. No effect on a CPU catalog.
   */
  public synchronized void deviceBudget(long bytes) {
    if (bytes < 0) {
      throw new UserException("a device budget is at least 0 bytes, not " + bytes);
    }
    deviceBudget = bytes;
    spillToBudget(0, null);
  }

  /**
   * Spills every device column that no query is reading now, whatever the budget (a query that
   * ran out of device memory tries again after this); returns the device bytes freed.
   */
  synchronized long spillIdle() {
    if (gpu == null) {
      return 0;
    }
    long[] freed = {0};
    eachColumn(tables.values(), (c, i) -> {
      long bytes = c.deviceBytes(i);
      if (c.spillable(i) && spill(c, i)) {
        freed[0] += bytes;
      }
    });
    return freed[0];
  }

  /**
   * Spills column {@code i} of {@code c}; false, and the column unchanged on the device, when host
   * memory is full too (the pool then tells the query that needs the room).
   */
  private boolean spill(CatalogChunk c, int i) {
    try {
      c.spill(gpu, i, allocator);
      return true;
    } catch (org.apache.arrow.memory.OutOfMemoryException e) {
      return false;
    }
  }

  /** Calls {@code f} with each column of each chunk of the tables of {@code entries}. */
  private static void eachColumn(java.util.Collection<Entry> entries, java.util.function.ObjIntConsumer<CatalogChunk> f) {
    for (Entry e : entries) {
      for (CatalogChunk c : e.held()) {
        for (int i = 0; i < c.columnCount(); i++) {
          f.accept(c, i);
        }
      }
    }
  }

  /** Device bytes the tables hold now, and host bytes of their columns spilled there. */
  public synchronized Residency residency() {
    return residency(tables.values());
  }

  /** {@link #residency()} of table {@code name} alone; a {@link UserException} if there is no such table. */
  public synchronized Residency residency(String name) {
    Entry e = tables.get(name.toLowerCase(Locale.ROOT));
    if (e == null) {
      throw new UserException("no table '" + name + "'");
    }
    return residency(List.of(e));
  }

  private static Residency residency(java.util.Collection<Entry> entries) {
    long[] bytes = {0, 0};
    eachColumn(entries, (c, i) -> {
      bytes[0] += c.deviceBytes(i);
      bytes[1] += c.spilledBytes(i);
    });
    for (Entry e : entries) {
      for (Table<?> part : e.pending) {
        for (int i = 0; i < part.columnCount(); i++) {
          bytes[0] += CatalogChunk.deviceBytes(part.column(i));
        }
      }
    }
    return new Residency(bytes[0], bytes[1]);
  }

  /** Where the catalog's table columns are: bytes on the device, and bytes spilled to host memory. */
  public record Residency(long deviceBytes, long spilledBytes) {}

  /**
   * What the scans of tables kept in files read from them since the catalog was made, on a GPU
   * catalog (which keeps what it read): column chunks and their device bytes, and of those the
   * ones read again after the device budget had dropped them, and the column chunks whose stored
   * pages the device decoded ({@link ChunkColumns}; the others were decoded on the host), with
   * those pages' bytes as stored in the files (compressed: what a cold scan reads from them and
   * sends over the link); and the rows of the chunks read, a chunk counted at each read of some of
   * its columns. A host catalog reads every scan anew and counts nothing here.
   */
  public record FileReads(long columnChunks, long bytes, long rereadColumnChunks, long rereadBytes,
      long decodedOnDevice, long storedBytes, long rows) {}

  private FileReads fileReads = new FileReads(0, 0, 0, 0, 0, 0, 0);

  /**
   * Chunk reads started ahead of their scans ({@link #readAhead}) since the catalog was made, on
   * either backend, and how many of them a scan took: the rest were read for nothing (the query
   * ended first, or the chunk's missing columns changed meanwhile).
   */
  public record ReadsAhead(long started, long taken) {}

  private long readsAheadStarted;
  // counted outside the catalog's lock too (a host catalog's reads)
  private final java.util.concurrent.atomic.AtomicLong readsAheadTaken = new java.util.concurrent.atomic.AtomicLong();

  /** See {@link ReadsAhead}. */
  public synchronized ReadsAhead readsAhead() {
    return new ReadsAhead(readsAheadStarted, readsAheadTaken.get());
  }

  // -Dgpudf.files.readAhead=false reads each chunk only when its scan runs
  private static final boolean READ_AHEAD = Boolean.parseBoolean(System.getProperty("gpudf.files.readAhead", "true"));

  /** {@link FileReads} so far. */
  public synchronized FileReads fileReads() {
    return fileReads;
  }

  /**
   * Chunk scans of chunked tables that had a filter over them when their queries were planned, and
   * of those the ones planning dropped because the chunk's file metadata (a Hive partition's value,
   * a column's footer range) shows that no row passes: what statistics skipped without reading.
   * Also the joins and aggregates planned in partitions ({@link JoinPartitioning}). Counted once
   * per plan; a query answered from the plan cache is not planned again.
   */
  public record ChunkScans(long filtered, long skipped, long partitioned) {}

  private long chunkScansFiltered;
  private long chunkScansSkipped;
  private long partitioned;

  /** {@link ChunkScans} so far. */
  public synchronized ChunkScans chunkScans() {
    return new ChunkScans(chunkScansFiltered, chunkScansSkipped, partitioned);
  }

  synchronized void countChunkScans(long filtered, long skipped, long partitioned) {
    chunkScansFiltered += filtered;
    chunkScansSkipped += skipped;
    this.partitioned += partitioned;
  }

  /** The setting that sets {@link #partitionBytes()} for every catalog that has not set its own. */
  public static final String PARTITION_BYTES_SETTING = "gpudf.plan.partitionBytes";
  private long partitionBytes = -1;

  /**
   * The bytes of a join's input read whole (by every chunk branch of the other input) past which a
   * query plans the join as joins of partitions, each holding a part of that input ({@link
   * JoinPartitioning}): as {@linkplain #partitionBytes(long) set}, else {@code
   * -Dgpudf.plan.partitionBytes}, else on the GPU a quarter of the {@linkplain #deviceBudget()
   * device budget} (at least 256 MiB), so that a budget below the data's size bounds what a join
   * holds too, and no bound on the CPU. Read when a query is planned; a cached plan keeps its own.
   */
  public synchronized long partitionBytes() {
    if (partitionBytes >= 0) {
      return partitionBytes;
    }
    Long set = Long.getLong(PARTITION_BYTES_SETTING);
    if (set != null && set >= 0) {
      return set;
    }
    return gpu == null ? Long.MAX_VALUE : Math.max(deviceBudget / 4, 256L << 20);
  }

  /** Sets {@link #partitionBytes()} for later plans. */
  public synchronized void partitionBytes(long bytes) {
    if (bytes < 0) {
      throw new UserException("a partition bound is at least 0 bytes, not " + bytes);
    }
    partitionBytes = bytes;
  }

  /**
   * Spills columns until the resident ones and {@code incoming} more bytes fit the budget, or
   * nothing more can spill; the columns of {@code reading} stay (a query is about to read them).
   */
  private void spillToBudget(long incoming, CatalogChunk reading) {
    if (gpu == null) {
      return;
    }
    long resident = residency().deviceBytes();
    while (resident + incoming > deviceBudget) {
      CatalogChunk[] victim = {null};
      int[] column = {-1};
      eachColumn(tables.values(), (c, i) -> {
        if (c != reading && c.spillable(i) && (victim[0] == null || colder(c, i, victim[0], column[0]))) {
          victim[0] = c;
          column[0] = i;
        }
      });
      if (victim[0] == null) {
        return;
      }
      long bytes = victim[0].deviceBytes(column[0]);
      if (!spill(victim[0], column[0])) {
        return;
      }
      resident -= bytes;
    }
  }

  /** Whether column {@code i} of {@code a} should spill before column {@code j} of {@code b}: read longer ago, or larger. */
  private static boolean colder(CatalogChunk a, int i, CatalogChunk b, int j) {
    return a.lastUse(i) != b.lastUse(j) ? a.lastUse(i) < b.lastUse(j) : a.deviceBytes(i) > b.deviceBytes(j);
  }

  @Override
  public synchronized void close() {
    tables.values().forEach(Entry::close);
    tables.clear();
    if (reader != null) {
      // reads still queued find their tables closed and end at once
      reader.shutdown();
    }
  }
}
