package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.calcite.sql.SqlBasicTypeNameSpec;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlDataTypeSpec;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.parser.SqlParseException;
import org.apache.calcite.sql.parser.SqlParser;
import org.apache.calcite.sql.type.SqlTypeFactoryImpl;
import org.apache.calcite.sql.type.SqlTypeName;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Tables from files: a directory's {@code *.parquet} (through Arrow Dataset's reader, types
 * kept; opened from the footer and read chunk by chunk when a query scans it, see {@link
 * dev.gpudf.sql.files.ParquetSource}), {@code *.arrow} (Arrow IPC file format, every batch) and {@code *.csv} (a header row, comma-separated, RFC 4180 quotes; each column typed as BIGINT,
 * DECIMAL, DOUBLE, DATE or VARCHAR by its values, unless its header cell declares a SQL type as
 * {@code name:TYPE}, such as {@code "price:DECIMAL(10,2)"} (quoted for its comma); an empty field is NULL) become catalog
 * tables named after the file.
 */
public final class FileTables {
  private static final List<String> FORMATS = List.of("arrow", "csv", "parquet");
  /**
   * Rows of a chunk of a Parquet table in {@code catalog}: what a scan holds in memory at once, per
   * column read ({@code -Dgpudf.files.chunkRows} sets it). Unless set, 2^18 on the CPU, where
   * smaller chunks measured faster and smaller (TPC-H SF1 q6 from files: 6.7 s and 617 MB at 2^18,
   * 8.1 s and 726 MB at 2^20, on 2 cores). On the GPU each chunk costs its own launches, and a
   * chunk's pages are what the device decodes at once: 2^26 where the device's pool holds 64 GiB
   * or more, else 2^24 (TPC-H SF10 in place on the H200, in one run: cold geometric mean 290 ms at
   * 2^26 against 352 ms at 2^24, hot 9.4 against 12.3 ms; 2^22 was slower still); and at most a
   * 256th of the catalog's device budget in rows (at least 2^20), so that under a budget below the
   * data's size a chunk of a few columns, read ahead while the one before it is worked on, stays
   * a small part of it.
   */
  static int chunkRows(Catalog catalog) {
    Integer set = Integer.getInteger("gpudf.files.chunkRows");
    if (set != null || !catalog.onGpu()) {
      return set != null ? set : 1 << 18;
    }
    int byPool = catalog.devicePoolBytes() >= 64L << 30 ? 1 << 26 : 1 << 24;
    long byBudget = Long.highestOneBit(Math.max(1, catalog.deviceBudget() >> 8));
    return (int) Math.min(byPool, Math.max(1 << 20, byBudget));
  }

  private FileTables() {}

  /**
   * Registers every supported file of {@code dir} in {@code catalog}, and every subdirectory of files
   * of one format: Parquet and Arrow IPC files from their footers only (read when a query scans
   * them), CSV files read whole; names starting with a dot are skipped, {@code %XX} in a name is
   * decoded ({@link dev.gpudf.sql.files.TableNames}). Returns the table names.
   */
  public static List<String> loadDirectory(Catalog catalog, Path dir, BufferAllocator allocator) {
    return loadDirectory(catalog, dir, allocator, chunkRows(catalog));
  }

  /** {@link #loadDirectory(Catalog, Path, BufferAllocator)} with Parquet chunks of about {@code chunkRows} rows. */
  static List<String> loadDirectory(Catalog catalog, Path dir, BufferAllocator allocator, int chunkRows) {
    catalog.dataDirectory(dir);
    List<String> names = new ArrayList<>();
    long parquetBytes = 0;
    Map<Path, dev.gpudf.sql.files.ChunkSource> opened = new java.util.HashMap<>();
    try {
      List<Listed> tables = list(dir);
      opened.putAll(openParquet(tables, allocator, chunkRows));
      for (Listed t : tables) {
        register(catalog, t.name(), t.format(), t.root(), t.files(), allocator, chunkRows, opened);
        names.add(t.name());
        if (t.format().equals("parquet")) {
          for (Path part : t.files()) {
            parquetBytes += Files.size(part);
          }
        }
        if (t.format().equals("arrow") && t.root().equals(dir)) {
          appendLogged(catalog, t.name(), dir, t.files().get(0), allocator);
        }
      }
    } catch (IOException e) {
      throw new UserException("cannot read directory " + dir + ": " + e.getMessage(), e);
    } finally {
      // those a failure left unregistered
      opened.values().forEach(dev.gpudf.sql.files.ChunkSource::close);
    }
    // a GPU catalog reads Parquet pages into pinned memory: pinned now, while the first query plans
    catalog.reservePinned(Math.min(parquetBytes, PINNED_RESERVE));
    return names;
  }

  /**
   * Pinned host memory a GPU catalog of Parquet tables pins when it opens them, at most (as much
   * as the files hold, if less): TPC-H SF10's q1 took 1.5 GiB of it, and pinning costs about 0.4
   * s per GiB (H200 host, 2026-12-04-tpch-sf10-parquet-profile-q1-h200-s28.txt). {@code
   * -Dgpudf.files.pinnedReserve} sets it in bytes.
   */
  private static final long PINNED_RESERVE = Long.getLong("gpudf.files.pinnedReserve", 2L << 30);

  /**
   * Applies the append log that Arrow file {@code f} (table {@code name}) names, where a server
   * wrote one ({@link dev.gpudf.sql.files.AppendLog}): its whole batches are the rows inserted
   * since the file was written.
   */
  private static void appendLogged(Catalog catalog, String name, Path dir, Path f, BufferAllocator allocator) throws IOException {
    String id = dev.gpudf.sql.files.AppendLog.logId(f, allocator);
    if (id == null) {
      return;
    }
    String stem = f.getFileName().toString();
    Path log = dev.gpudf.sql.files.AppendLog.path(dir, stem.substring(0, stem.length() - ".arrow".length()), id);
    if (Files.isRegularFile(log, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      dev.gpudf.sql.files.AppendLog.replay(log, allocator, rows -> catalog.append(name, rows));
    }
  }

  /** The format of a supported file's extension, or null. */
  static String formatOf(Path f) {
    String lower = f.getFileName().toString().toLowerCase(Locale.ROOT);
    String format = lower.substring(lower.lastIndexOf('.') + 1);
    return FORMATS.contains(format) ? format : null;
  }

  /** The one supported format of the files under {@code dir}, or null when it holds none or several. */
  private static String directoryFormat(Path dir) throws IOException {
    java.util.Set<String> formats = new java.util.TreeSet<>();
    try (Stream<Path> files = Files.walk(dir, dev.gpudf.sql.files.FileGlob.MAX_DEPTH)) {
      files.filter(p -> Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)).map(FileTables::formatOf)
          .filter(java.util.Objects::nonNull).limit(dev.gpudf.sql.files.FileGlob.MAX_FILES).forEach(formats::add);
    }
    return formats.size() == 1 ? formats.iterator().next() : null;
  }

  /**
   * Registers {@code files} (one format, one schema) as table {@code name}, or under a hidden
   * name when it is null; returns the name. Parquet and Arrow IPC files stay in the files (read
   * per query, chunk by chunk), with a column for each {@code key=value} directory of their paths
   * below {@code root} (Hive partitioning, {@link dev.gpudf.sql.files.PartitionedSource}); CSV files
   * and dictionary-encoded Arrow files are read now. Nothing is registered if any file fails.
   */
  static String register(Catalog catalog, String name, String format, Path root, List<Path> files,
      BufferAllocator allocator, int chunkRows) {
    return register(catalog, name, format, root, files, allocator, chunkRows, new java.util.HashMap<>());
  }

  /** A table of a directory: its name, format, the folder its partition columns start from, and its files. */
  private record Listed(String name, String format, Path root, List<Path> files) {}

  /**
   * The tables of directory {@code dir}, by file name: each supported file, and each subdirectory
   * of files of one format; names starting with a dot are skipped (temporary files of a write, the
   * server's superseded files).
   */
  private static List<Listed> list(Path dir) throws IOException {
    List<Listed> tables = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.sorted().toList()) {
        String file = f.getFileName().toString();
        if (file.startsWith(".")) {
          continue;
        }
        if (Files.isDirectory(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          // a directory of files of one format and schema is one table, named after it
          String format = directoryFormat(f);
          if (format != null) {
            tables.add(new Listed(dev.gpudf.sql.files.TableNames.tableName(file), format, f,
                dev.gpudf.sql.files.FileGlob.match(f, "**." + format)));
          }
          continue;
        }
        String format = formatOf(f);
        if (format != null) {
          tables.add(new Listed(dev.gpudf.sql.files.TableNames.tableName(file.substring(0, file.lastIndexOf('.'))),
              format, dir, List.of(f)));
        }
      }
    }
    return tables;
  }

  /**
   * The Parquet files of {@code tables} opened on several threads: opening reads a footer (and,
   * for a file whose footer does not tell its columns, makes Arrow's reader, which counts the
   * batches natively); with Arrow's reader for every file, a directory's files one after another
   * took 170 ms of a 1.9 s TPC-H q6 over SF1 on 2 cores (where the gain measured within noise:
   * 1.83-1.87 s against 1.88; hosts of more cores gain more). The first failure in the listing's order is thrown once all
   * have ended, with every opened file closed, so a directory with a bad Parquet file registers no
   * table.
   */
  private static Map<Path, dev.gpudf.sql.files.ChunkSource> openParquet(List<Listed> tables,
      BufferAllocator allocator, int chunkRows) {
    List<Path> parquet = tables.stream().filter(t -> t.format().equals("parquet")).flatMap(t -> t.files().stream()).toList();
    dev.gpudf.sql.files.ChunkSource[] sources = new dev.gpudf.sql.files.ChunkSource[parquet.size()];
    RuntimeException[] failures = new RuntimeException[parquet.size()];
    java.util.stream.IntStream.range(0, parquet.size()).parallel().forEach(i -> {
      try {
        sources[i] = dev.gpudf.sql.files.ParquetSource.open(parquet.get(i), allocator, chunkRows);
      } catch (RuntimeException e) {
        failures[i] = e;
      }
    });
    Map<Path, dev.gpudf.sql.files.ChunkSource> opened = new java.util.HashMap<>();
    for (int i = 0; i < sources.length; i++) {
      if (sources[i] != null) {
        opened.put(parquet.get(i), sources[i]);
      }
    }
    for (RuntimeException e : failures) {
      if (e != null) {
        opened.values().forEach(dev.gpudf.sql.files.ChunkSource::close);
        throw e;
      }
    }
    return opened;
  }

  /**
   * {@link #register(Catalog, String, String, Path, List, BufferAllocator, int)} taking the
   * sources of files in {@code opened} (removed from it) instead of opening them.
   */
  private static String register(Catalog catalog, String name, String format, Path root, List<Path> files,
      BufferAllocator allocator, int chunkRows, Map<Path, dev.gpudf.sql.files.ChunkSource> opened) {
    boolean lazy = format.equals("parquet")
        || format.equals("arrow") && files.stream().noneMatch(f -> dev.gpudf.sql.files.ArrowIpcSource.encoded(f, allocator));
    if (lazy) {
      List<dev.gpudf.sql.files.ChunkSource> sources = new ArrayList<>();
      try {
        for (Path f : files) {
          dev.gpudf.sql.files.ChunkSource before = opened.remove(f);
          sources.add(before != null ? before : format.equals("parquet") ? dev.gpudf.sql.files.ParquetSource.open(f, allocator, chunkRows)
              : dev.gpudf.sql.files.ArrowIpcSource.open(f, allocator, chunkRows));
        }
      } catch (RuntimeException e) {
        sources.forEach(dev.gpudf.sql.files.ChunkSource::close);
        throw e;
      }
      List<dev.gpudf.sql.files.ChunkSource> parts = dev.gpudf.sql.files.PartitionedSource.of(root, files, sources);
      dev.gpudf.sql.files.ChunkSource source = parts.size() == 1 ? parts.get(0)
          : new dev.gpudf.sql.files.MultiSource(parts, files.stream().map(Path::toString).toList());
      if (name == null) {
        return catalog.registerHidden(source);
      }
      catalog.register(name, source);
      return name;
    }
    List<VectorSchemaRoot> roots = new ArrayList<>();
    try {
      for (Path f : files) {
        roots.add(read(f, format, allocator));
      }
      for (int i = 1; i < roots.size(); i++) {
        List<dev.gpudf.columnar.DataType> first = dev.gpudf.columnar.ArrowTypes.checkBatch(roots.get(0));
        List<dev.gpudf.columnar.DataType> other = dev.gpudf.columnar.ArrowTypes.checkBatch(roots.get(i));
        List<String> firstNames = roots.get(0).getSchema().getFields().stream().map(f -> f.getName()).toList();
        List<String> otherNames = roots.get(i).getSchema().getFields().stream().map(f -> f.getName()).toList();
        if (!first.equals(other) || !firstNames.equals(otherNames)) {
          throw new UserException(files.get(i) + " has columns " + otherNames + " " + other + " where " + files.get(0)
              + " has " + firstNames + " " + first + ": the files of one table must have one schema");
        }
      }
      String registered = name == null ? catalog.registerHidden(roots.get(0)) : name;
      if (name != null) {
        catalog.register(name, roots.get(0));
      }
      for (int i = 1; i < roots.size(); i++) {
        catalog.append(registered, roots.get(i));
      }
      return registered;
    } catch (IOException e) {
      throw new UserException("cannot read " + files + ": " + e.getMessage(), e);
    } finally {
      roots.forEach(VectorSchemaRoot::close);
    }
  }

  /**
   * The rows of {@code file} in {@code format} ({@code arrow}, {@code csv} or {@code parquet})
   * as one root; the caller closes it.
   */
  public static VectorSchemaRoot read(Path file, String format, BufferAllocator allocator) throws IOException {
    switch (format) {
      case "arrow":
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
            ArrowFileReader reader = new ArrowFileReader(ch, allocator)) {
          dev.gpudf.sql.files.ArrowIpcBlocks.check(ch, reader, ch.size(), file);
          return allBatches(reader, allocator, file.toString());
        } catch (dev.gpudf.columnar.error.GpudfException e) {
          throw e;
        } catch (IOException | RuntimeException e) {
          // Arrow's reader reports a damaged footer or schema unchecked, a short read as IOException
          throw new UserException(file + " is not a readable Arrow IPC file: " + e.getMessage(), e);
        }
      case "csv":
        return csv(file, allocator);
      case "parquet":
        return ParquetFiles.read(file, allocator);
      default:
        throw new UserException("unknown file format '" + format + "' (arrow, csv, parquet)");
    }
  }

  /** Every batch of {@code reader} in one root; the caller closes it. */
  static VectorSchemaRoot allBatches(ArrowReader reader, BufferAllocator allocator, String source) throws IOException {
    return dev.gpudf.sql.files.Batches.append(reader, allocator, Long.MAX_VALUE, source);
  }


  /** A CSV file with a header row as one root; the caller closes it. */
  static VectorSchemaRoot csv(Path file, BufferAllocator allocator) throws IOException {
    List<List<String>> rows;
    try (java.io.BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      rows = parse(r);
    }
    if (rows.isEmpty()) {
      throw new UserException(file + " has no header row");
    }
    List<String> header = rows.get(0);
    List<List<String>> data = new ArrayList<>();
    for (int i = 1; i < rows.size(); i++) {
      List<String> row = rows.get(i);
      if (row.size() == header.size()) {
        data.add(row);
      } else if (!(row.size() == 1 && row.get(0).isEmpty())) {
        // a blank line is skipped; any other row of the wrong width is refused, not padded or cut
        throw new UserException(file + ": record " + (i + 1) + " has " + row.size() + " fields where the header has "
            + header.size());
      }
    }
    List<FieldVector> vectors = new ArrayList<>();
    try {
      for (int c = 0; c < header.size(); c++) {
        final int col = c;
        List<String> values = data.stream().map(row -> row.get(col)).toList();
        int colon = header.get(c).indexOf(':');
        vectors.add(colon < 0 ? column(allocator, header.get(c), values)
            : declared(allocator, file, header.get(c).substring(0, colon).strip(), header.get(c).substring(colon + 1), values));
      }
    } catch (RuntimeException e) {
      vectors.forEach(FieldVector::close);
      throw e;
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(data.size());
    return root;
  }

  /** A column whose header cell declared its SQL type ({@code price:DECIMAL(10,2)}): every value must be one. */
  private static FieldVector declared(BufferAllocator a, Path file, String name, String sqlType, List<String> values) {
    DataType type;
    try {
      SqlNode cast = SqlParser.create("CAST(NULL AS " + sqlType + ")", GpuSession.PARSER).parseExpression();
      SqlDataTypeSpec spec = (SqlDataTypeSpec) ((SqlCall) cast).operand(1);
      SqlBasicTypeNameSpec basic = (SqlBasicTypeNameSpec) spec.getTypeNameSpec();
      SqlTypeName name0 = SqlTypeName.get(basic.getTypeName().getSimple());
      SqlTypeFactoryImpl f = new SqlTypeFactoryImpl(GpudfTypeSystem.INSTANCE);
      type = SqlTypes.fromCalcite(basic.getScale() >= 0 ? f.createSqlType(name0, basic.getPrecision(), basic.getScale())
          : basic.getPrecision() >= 0 ? f.createSqlType(name0, basic.getPrecision()) : f.createSqlType(name0));
    } catch (SqlParseException | RuntimeException e) {
      throw new UserException(file + ": column '" + name + "' declares '" + sqlType + "', which is not a SQL type gpudf has", e);
    }
    List<Object> parsed = new ArrayList<>(values.size());
    for (int r = 0; r < values.size(); r++) {
      String v = values.get(r);
      try {
        parsed.add(v.isEmpty() ? null : value(type, v.strip()));
      } catch (RuntimeException e) {
        throw new UserException(file + " row " + (r + 2) + " column '" + name + "': '" + v + "' is not a " + type, e);
      }
    }
    return ScalarTables.column(a, name, type, parsed);
  }

  private static Object value(DataType type, String v) {
    return switch (type.id()) {
      case BOOL -> {
        if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
          throw new IllegalArgumentException("not a boolean");
        }
        yield v.equalsIgnoreCase("true");
      }
      case INT8, INT16, INT32, INT64 -> {
        long x = Long.parseLong(v);
        if (type.byteWidth() < 8 && (x >> (8 * type.byteWidth() - 1)) != (x < 0 ? -1 : 0)) {
          throw new IllegalArgumentException("out of range");
        }
        yield x;
      }
      case FLOAT32, FLOAT64 -> Double.parseDouble(v);
      case DECIMAL -> {
        BigDecimal d = new BigDecimal(v).setScale(type.scale(), java.math.RoundingMode.HALF_UP);
        if (d.precision() > type.precision()) {
          throw new IllegalArgumentException("too many digits");
        }
        yield d;
      }
      case DATE -> LocalDate.parse(v).toEpochDay();
      case TIMESTAMP -> {
        java.time.Instant at = java.time.LocalDateTime.parse(v.replace(' ', 'T')).toInstant(java.time.ZoneOffset.UTC);
        long seconds = at.getEpochSecond();
        long nanos = at.getNano();
        yield switch (type.timeUnit()) {
          case SECOND -> seconds;
          case MILLISECOND -> Math.addExact(Math.multiplyExact(seconds, 1_000L), nanos / 1_000_000L);
          case MICROSECOND -> Math.addExact(Math.multiplyExact(seconds, 1_000_000L), nanos / 1_000L);
          case NANOSECOND -> Math.addExact(Math.multiplyExact(seconds, 1_000_000_000L), nanos);
        };
      }
      case STRING -> v;
    };
  }

  private static FieldVector column(BufferAllocator a, String name, List<String> values) {
    boolean allLong = true;
    boolean allDecimal = true;
    boolean allDouble = true;
    boolean allDate = true;
    int scale = 0;
    int digits = 1;
    for (String v : values) {
      if (v.isEmpty()) {
        continue;
      }
      allLong &= v.matches("-?\\d{1,18}");
      allDecimal &= v.matches("-?\\d{1,18}\\.\\d{1,18}");
      if (allDecimal) {
        BigDecimal d = new BigDecimal(v);
        scale = Math.max(scale, d.scale());
        digits = Math.max(digits, d.precision() - d.scale());
      }
      allDouble &= v.matches("-?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");
      allDate &= v.matches("\\d{4}-\\d{2}-\\d{2}");
    }
    DataType type;
    java.util.function.Function<String, Object> parse;
    if (allLong) {
      type = DataType.INT64;
      parse = Long::parseLong;
    } else if (allDecimal && digits + scale <= 38) {
      type = DataType.decimal(digits + scale, scale);
      parse = BigDecimal::new;
    } else if (allDouble) {
      type = DataType.FLOAT64;
      parse = Double::parseDouble;
    } else if (allDate) {
      type = DataType.DATE;
      parse = d -> LocalDate.parse(d).toEpochDay();
    } else {
      type = DataType.STRING;
      parse = t -> t;
    }
    return ScalarTables.column(a, name, type, values.stream().map(v -> v.isEmpty() ? null : parse.apply(v)).toList());
  }

  /** RFC 4180: fields split by commas, double-quoted fields may hold commas, newlines and "" for a quote. */
  static List<List<String>> parse(java.io.BufferedReader r) throws IOException {
    List<List<String>> rows = new ArrayList<>();
    List<String> row = new ArrayList<>();
    StringBuilder field = new StringBuilder();
    boolean quoted = false;
    boolean any = false;
    int ch;
    while ((ch = r.read()) >= 0) {
      any = true;
      if (quoted) {
        if (ch == '"') {
          r.mark(1);
          int next = r.read();
          if (next == '"') {
            field.append('"');
          } else {
            quoted = false;
            if (next >= 0) {
              r.reset();
            }
          }
        } else {
          field.append((char) ch);
        }
      } else if (ch == '"') {
        quoted = true;
      } else if (ch == ',') {
        row.add(field.toString());
        field.setLength(0);
      } else if (ch == '\n') {
        row.add(field.toString());
        field.setLength(0);
        rows.add(row);
        row = new ArrayList<>();
        any = false;
      } else if (ch != '\r') {
        field.append((char) ch);
      }
    }
    if (any) {
      row.add(field.toString());
      rows.add(row);
    }
    if (quoted) {
      throw new UserException("a quoted CSV field is not closed");
    }
    return rows;
  }
}
