package dev.gpudf.formats;

import dev.gpudf.columnar.DataType;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.ColumnOrder;
import dev.gpudf.kernels.ParquetDecode;
import org.apache.parquet.format.ConvertedType;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.FieldRepetitionType;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Statistics;
import org.apache.parquet.format.Type;
import org.apache.parquet.format.Util;

/**
 * What a Parquet file's footer says of its row groups, for skipping chunks: each row group's row
 * count and each column's {@link ValueRange}, read with the format's own Thrift structures. Only
 * bounds whose order is the engine's are used: {@code min_value}/{@code max_value} under the
 * type-defined column order, of signed integer, DATE and UTF-8 string columns (strings compare by
 * unsigned bytes in both). Anything else (floating point, decimals, unsigned integers, the legacy
 * {@code min}/{@code max}, encrypted columns, a bound that is not valid UTF-8) is no range, which
 * skips nothing; so is every column of a footer that does not describe the flat columns the file
 * was opened with.
 */
public final class ParquetFooter {
  /** A footer larger than this is not read for statistics (a real one is kilobytes to megabytes). */
  private static final int MAX_FOOTER_BYTES = 64 << 20;
  private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

  private ParquetFooter() {}

  /**
   * One row group: its rows, per column (the file's order, or the order a reader asked for them
   * in) its range (null where unknown), the bytes its column chunk takes in the file (compressed,
   * as stored; 0 where the footer says none) and where its pages are for the device to decode them
   * (null where it cannot); the most bytes one of its string columns is charged ({@link
   * #stringBytes}); and the file offset of its middle, by which a reader given a byte range of the
   * file takes it (the rule of Parquet's Java reader, which Spark's splits follow: the row group is
   * the range's whose [start, end) holds its first column chunk's start plus half its compressed
   * size).
   */
  public record RowGroup(long rows, List<ValueRange> ranges, long[] storedBytes, List<Stored> stored, long stringBytes,
      long midpoint) {}

  /**
   * A column chunk the device decodes ({@link ParquetDecode#decodes}): {@code bytes} from file
   * offset {@code start}, values of {@code width} bytes, {@code codec}, definition levels when
   * {@code optional}. Only what the footer says; the page headers are checked when read.
   */
  public record Stored(long start, long bytes, int width, ParquetDecode.Codec codec, boolean optional) {}

  /** Encodings whose pages the device decodes (levels: RLE; values: PLAIN and dictionary indexes). */
  private static final java.util.Set<Encoding> DEVICE_ENCODINGS = java.util.EnumSet.of(Encoding.PLAIN,
      Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY, Encoding.RLE, Encoding.BIT_PACKED);

  /**
   * The row groups of {@code file}, whose columns are {@code names} of {@code types}; null when
   * the footer's schema is not those flat columns. A footer that cannot be read is an
   * {@link IOException} (or the Thrift reader's runtime exception); the caller decides.
   */
  public static List<RowGroup> read(Path file, List<String> names, List<DataType> types) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      FileMetaData meta = meta(ch);
      List<SchemaElement> schema = meta.getSchema();
      if (schema == null || schema.size() != names.size() + 1) {
        return null;
      }
      int[] leaves = new int[names.size()];
      for (int c = 0; c < names.size(); c++) {
        SchemaElement e = schema.get(c + 1);
        if (e.getNum_children() > 0 || !names.get(c).equals(e.getName())) {
          return null;
        }
        leaves[c] = c;
      }
      return groups(ch, meta, leaves, types);
    }
  }

  /**
   * The row groups of {@code file} as {@link #read} gives them, over the columns {@code names} of
   * {@code types} only, in that order, found by name among the file's; null when the file's schema
   * is not flat, lacks one of them, or stores one as another type than gpudf's {@code type} (a
   * reader asking for the columns of a table it was told of, which other files may not match).
   * {@code keyValues} gets the footer's key-value metadata (what wrote the file, say).
   */
  static List<RowGroup> locate(Path file, List<String> names, List<DataType> types, java.util.Map<String, String> keyValues)
      throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      FileMetaData meta = meta(ch);
      if (meta.getKey_value_metadata() != null) {
        for (org.apache.parquet.format.KeyValue kv : meta.getKey_value_metadata()) {
          if (kv.getKey() != null) {
            keyValues.put(kv.getKey(), kv.getValue());
          }
        }
      }
      List<SchemaElement> schema = meta.getSchema();
      if (schema == null || schema.isEmpty()) {
        return null;
      }
      java.util.Map<String, Integer> leafOf = new java.util.HashMap<>();
      for (int e = 1; e < schema.size(); e++) {
        if (schema.get(e).getNum_children() > 0) {
          return null;
        }
        leafOf.putIfAbsent(schema.get(e).getName(), e - 1);
      }
      int[] leaves = new int[names.size()];
      for (int c = 0; c < names.size(); c++) {
        Integer leaf = leafOf.get(names.get(c));
        if (leaf == null || !holds(schema.get(leaf + 1), types.get(c))) {
          return null;
        }
        leaves[c] = leaf;
      }
      return groups(ch, meta, leaves, types);
    }
  }

  /**
   * A file whose columns are all flat and of the types {@link #holds} takes: their names and
   * types as Arrow's reader gives them, and its row groups as {@link #read} gives them.
   */
  public record Columns(List<String> names, List<DataType> types, List<RowGroup> groups) {}

  /**
   * Reads {@code file}'s footer and checks what every reader relies on before it is given the file
   * (its row counts, {@link #checkRows}); a footer that cannot be read or fails is an {@link
   * IOException} (or the Thrift reader's runtime exception). {@link #read}, {@link #columns} and
   * the others check the same as they read.
   */
  public static void check(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      meta(ch);
    }
  }

  /**
   * {@code file}'s columns from its footer alone, or null when one of them is nested, repeated or
   * of a type {@link #holds} does not take, or a row group does not describe them all (then
   * Arrow's reader tells the schema). A footer that
   * cannot be read is an {@link IOException} (or the Thrift reader's runtime exception).
   */
  public static Columns columns(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      FileMetaData meta = meta(ch);
      List<SchemaElement> schema = meta.getSchema();
      if (schema == null || schema.size() < 2 || schema.get(0).getNum_children() != schema.size() - 1) {
        return null;
      }
      List<String> names = new ArrayList<>();
      List<DataType> types = new ArrayList<>();
      int[] leaves = new int[schema.size() - 1];
      for (int c = 0; c < leaves.length; c++) {
        SchemaElement e = schema.get(c + 1);
        DataType type = e.getNum_children() > 0 || e.getName() == null ? null : typeOf(e);
        if (type == null) {
          return null;
        }
        names.add(e.getName());
        types.add(type);
        leaves[c] = c;
      }
      List<RowGroup> groups = groups(ch, meta, leaves, types);
      return groups == null ? null : new Columns(List.copyOf(names), List.copyOf(types), groups);
    }
  }

  /** The type a flat column is read as, where {@link #holds} takes it; else null. */
  static DataType typeOf(SchemaElement e) {
    if (!e.isSetType()) {
      return null;
    }
    org.apache.parquet.format.LogicalType logical = e.isSetLogicalType() ? e.getLogicalType() : null;
    boolean decimal = logical != null ? logical.isSetDECIMAL() : e.isSetConverted_type()
        && e.getConverted_type() == ConvertedType.DECIMAL;
    DataType type;
    if (decimal) {
      int precision = logical != null ? logical.getDECIMAL().getPrecision() : e.getPrecision();
      int scale = logical != null ? logical.getDECIMAL().getScale() : e.getScale();
      type = precision < 1 || precision > 18 || scale < 0 || scale > precision ? null : DataType.decimal(precision, scale);
    } else {
      type = switch (e.getType()) {
        case INT32 -> holds(e, DataType.DATE) ? DataType.DATE : DataType.INT32;
        case INT64 -> DataType.INT64;
        case FLOAT -> DataType.FLOAT32;
        case DOUBLE -> DataType.FLOAT64;
        case BYTE_ARRAY -> DataType.STRING;
        default -> null;
      };
    }
    // the inverse of holds, so that no other annotation (unsigned, time, JSON ...) is read as a plain type
    return type != null && holds(e, type) ? type : null;
  }

  /** The footer of the file open on {@code ch}, after its magic and length are checked. */
  private static FileMetaData meta(FileChannel ch) throws IOException {
    long fileSize = ch.size();
    if (fileSize < 12) {
      throw new IOException("too short for Parquet (" + fileSize + " bytes)");
    }
    ByteBuffer tail = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    readFully(ch, tail, fileSize - 8);
    byte[] magic = new byte[4];
    tail.get(4, magic);
    int length = tail.getInt(0);
    if (!java.util.Arrays.equals(magic, MAGIC) || length <= 0 || length > fileSize - 12 || length > MAX_FOOTER_BYTES) {
      throw new IOException("no Parquet footer of a readable length at its end");
    }
    ByteBuffer footer = ByteBuffer.allocate(length);
    readFully(ch, footer, fileSize - 8 - length);
    FileMetaData meta = Util.readFileMetaData(new ByteArrayInputStream(footer.array()));
    checkRows(meta);
    return meta;
  }

  /**
   * Checks the footer's row counts against each other: each row group's at most {@link
   * Integer#MAX_VALUE} (gpudf's and Arrow's vectors count rows in an int) and not negative, their
   * sum the file's. A damaged count is an {@link IOException} naming the row group, before any
   * reader (Arrow's native one included, which sizes allocations by it) is given the file.
   */
  private static void checkRows(FileMetaData meta) throws IOException {
    List<org.apache.parquet.format.RowGroup> groups = meta.getRow_groups() == null ? List.of() : meta.getRow_groups();
    long sum = 0;
    for (int g = 0; g < groups.size(); g++) {
      long rows = groups.get(g).getNum_rows();
      if (rows < 0 || rows > Integer.MAX_VALUE) {
        throw new IOException("row group " + g + " says it holds " + rows + " rows");
      }
      sum += rows;
    }
    if (sum != meta.getNum_rows()) {
      throw new IOException("the footer says " + meta.getNum_rows() + " rows, its " + groups.size()
          + " row groups " + sum);
    }
  }

  /**
   * The row groups of {@code meta}, each over the file's columns {@code leaves} (leaf indexes of a
   * flat schema, of gpudf types {@code types}); null when a row group does not hold the schema's
   * columns.
   */
  private static List<RowGroup> groups(FileChannel ch, FileMetaData meta, int[] leaves, List<DataType> types)
      throws IOException {
    long fileSize = ch.size();
    List<SchemaElement> schema = meta.getSchema();
    List<ColumnOrder> orders = meta.getColumn_orders();
    int columns = schema.size() - 1;
    List<RowGroup> groups = new ArrayList<>();
    for (org.apache.parquet.format.RowGroup g : meta.getRow_groups() == null ? List.<org.apache.parquet.format.RowGroup>of()
        : meta.getRow_groups()) {
      if (g.getColumnsSize() != columns || g.getNum_rows() < 0) {
        return null;
      }
      List<ValueRange> ranges = new ArrayList<>();
      long[] stored = new long[leaves.length];
      List<Stored> pages = new ArrayList<>();
      long strings = 0;
      for (int c = 0; c < leaves.length; c++) {
        int leaf = leaves[c];
        boolean typeOrder = orders != null && orders.size() == columns && orders.get(leaf).isSetTYPE_ORDER();
        ColumnChunk chunk = g.getColumns().get(leaf);
        ranges.add(range(chunk, schema.get(leaf + 1), typeOrder, types.get(c), g.getNum_rows()));
        stored[c] = chunk.isSetMeta_data() ? Math.max(0, chunk.getMeta_data().getTotal_compressed_size()) : 0;
        pages.add(stored(chunk, schema.get(leaf + 1), types.get(c), g.getNum_rows(), fileSize));
        strings = Math.max(strings, stringBytes(chunk, types.get(c), g.getNum_rows(), ch, fileSize));
      }
      groups.add(new RowGroup(g.getNum_rows(), ranges, stored, java.util.Collections.unmodifiableList(pages), strings,
          midpoint(g)));
    }
    return groups;
  }

  /**
   * Where the middle of row group {@code g} lies in its file, as Parquet's Java reader places it
   * for a file whose first column chunk has its metadata: that chunk's first page (its dictionary
   * page's offset where one is set below its data page's), plus half the row group's compressed
   * size (the sum of its column chunks' where the row group does not give it). Long.MIN_VALUE,
   * which no byte range holds, for a row group whose first column chunk has no metadata: such a
   * file is read by another reader whole ({@link ParquetRowGroups}).
   */
  private static long midpoint(org.apache.parquet.format.RowGroup g) {
    if (g.getColumnsSize() == 0) {
      return Long.MIN_VALUE;
    }
    ColumnChunk first = g.getColumns().get(0);
    if (!first.isSetMeta_data()) {
      return Long.MIN_VALUE;
    }
    ColumnMetaData m = first.getMeta_data();
    long start = m.getData_page_offset();
    if (m.isSetDictionary_page_offset() && start > m.getDictionary_page_offset()) {
      start = m.getDictionary_page_offset();
    }
    long size = 0;
    if (g.isSetTotal_compressed_size()) {
      size = g.getTotal_compressed_size();
    } else {
      for (ColumnChunk c : g.getColumns()) {
        if (!c.isSetMeta_data()) {
          return Long.MIN_VALUE;
        }
        size += c.getMeta_data().getTotal_compressed_size();
      }
    }
    return start + size / 2;
  }

  /**
   * Whether the footer's column {@code e} holds values gpudf reads as {@code type}: the physical
   * type and its annotation (logical or converted type) say the same type, a decimal the same
   * precision and scale. Anything else (unsigned or narrow integers, timestamps, binary, nested,
   * repeated) is not held, and a reader leaves the file to another.
   */
  static boolean holds(SchemaElement e, DataType type) {
    if (!e.isSetType() || e.getRepetition_type() == FieldRepetitionType.REPEATED) {
      return false;
    }
    org.apache.parquet.format.LogicalType logical = e.isSetLogicalType() ? e.getLogicalType() : null;
    ConvertedType converted = e.isSetConverted_type() ? e.getConverted_type() : null;
    boolean bare = logical == null && converted == null;
    return switch (type.id()) {
      case INT32 -> e.getType() == Type.INT32 && (bare || integer(logical, converted, 32));
      case INT64 -> e.getType() == Type.INT64 && (bare || integer(logical, converted, 64));
      case FLOAT32 -> e.getType() == Type.FLOAT && bare;
      case FLOAT64 -> e.getType() == Type.DOUBLE && bare;
      case DATE -> e.getType() == Type.INT32
          && (logical != null ? logical.isSetDATE() : converted == ConvertedType.DATE);
      case STRING -> e.getType() == Type.BYTE_ARRAY
          && (logical != null ? logical.isSetSTRING() : converted == ConvertedType.UTF8);
      case DECIMAL -> (e.getType() == Type.INT32 || e.getType() == Type.INT64)
          && (logical != null ? logical.isSetDECIMAL() && logical.getDECIMAL().getPrecision() == type.precision()
              && logical.getDECIMAL().getScale() == type.scale()
              : converted == ConvertedType.DECIMAL && e.getPrecision() == type.precision() && e.getScale() == type.scale());
      default -> false;
    };
  }

  /** A signed integer annotation of {@code bits} bits (a converted type of INT_32/INT_64 too). */
  private static boolean integer(org.apache.parquet.format.LogicalType logical, ConvertedType converted, int bits) {
    if (logical != null) {
      return logical.isSetINTEGER() && logical.getINTEGER().isIsSigned() && logical.getINTEGER().getBitWidth() == bits;
    }
    return converted == (bits == 32 ? ConvertedType.INT_32 : ConvertedType.INT_64);
  }

  /**
   * Bytes of string data column chunk {@code chunk} (of a row group of {@code rows} rows) is
   * charged against a chunk's cap on one string column ({@link ChunkSource#group}): what it holds
   * once decoded where the metadata bounds that, else twice an estimate, which can fall short; 0
   * for a column of another type. Bounded where the writer recorded the unencoded bytes (size
   * statistics, exact) or where every page is PLAIN (no dictionary, no delta encodings): its
   * uncompressed size then counts each string's bytes and 4 of length besides (charged as an
   * estimate, twice over, TPC-H SF10's l_comment cut lineitem in two chunks, and every query over
   * lineitem from files ran hot with twice the launches of resident tables). Estimated otherwise: the
   * largest of its uncompressed size; its rows times the mean length of its minimum and maximum;
   * and, with a dictionary, its rows times the dictionary's mean entry (from the dictionary page's
   * header, read from {@code ch}: the uncompressed size counts each distinct string once, and
   * writers cut long statistics short). A file's metadata is not trusted: the read itself still
   * refuses a chunk past 2 GiB of strings.
   */
  public static long stringBytes(ColumnChunk chunk, DataType type, long rows, FileChannel ch, long fileSize) {
    if (type.id() != dev.gpudf.columnar.TypeId.STRING || !chunk.isSetMeta_data()) {
      return 0;
    }
    ColumnMetaData m = chunk.getMeta_data();
    if (m.isSetSize_statistics() && m.getSize_statistics().isSetUnencoded_byte_array_data_bytes()) {
      return Math.max(0, m.getSize_statistics().getUnencoded_byte_array_data_bytes());
    }
    long bytes = Math.max(0, m.getTotal_uncompressed_size());
    if (!m.isSetDictionary_page_offset() && m.getEncodings() != null && PLAIN_ENCODINGS.containsAll(m.getEncodings())) {
      return bytes;
    }
    long rowsAtLeast0 = Math.max(0, rows);
    if (m.isSetStatistics()) {
      Statistics st = m.getStatistics();
      byte[] min = st.isSetMin_value() ? st.getMin_value() : st.isSetMin() ? st.getMin() : null;
      byte[] max = st.isSetMax_value() ? st.getMax_value() : st.isSetMax() ? st.getMax() : null;
      if (min != null && max != null) {
        bytes = Math.max(bytes, times(rowsAtLeast0, (min.length + max.length + 1) / 2));
      }
    }
    long entry = dictionaryEntryBytes(m, ch, fileSize);
    return times(2, entry > 0 ? Math.max(bytes, times(rowsAtLeast0, entry)) : bytes);
  }

  /** Encodings of a column chunk whose uncompressed size bounds its strings' bytes: PLAIN values, levels. */
  private static final java.util.Set<Encoding> PLAIN_ENCODINGS = java.util.EnumSet.of(Encoding.PLAIN, Encoding.RLE,
      Encoding.BIT_PACKED);

  /** {@code a * b} for {@code a, b >= 0}, at most {@link Long#MAX_VALUE}: a footer's row count is not trusted to be small. */
  private static long times(long a, long b) {
    return b != 0 && a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
  }

  // a dictionary page's header is a few dozen bytes; one that does not fit this is not used
  private static final int DICTIONARY_HEADER_BYTES = 1024;

  /**
   * The mean bytes of a dictionary entry of column chunk {@code m} (PLAIN strings: 4 bytes of
   * length before each), from its dictionary page's header; 0 when it has none or the header
   * cannot be read as one (the estimate then goes without it).
   */
  private static long dictionaryEntryBytes(ColumnMetaData m, FileChannel ch, long fileSize) {
    if (!m.isSetDictionary_page_offset()) {
      return 0;
    }
    long at = m.getDictionary_page_offset();
    if (at < MAGIC.length || at >= fileSize) {
      return 0;
    }
    try {
      ByteBuffer b = ByteBuffer.allocate((int) Math.min(DICTIONARY_HEADER_BYTES, fileSize - at));
      readFully(ch, b, at);
      org.apache.parquet.format.PageHeader h = org.apache.parquet.format.Util.readPageHeader(new ByteArrayInputStream(b.array()));
      if (h.getType() != org.apache.parquet.format.PageType.DICTIONARY_PAGE || !h.isSetDictionary_page_header()) {
        return 0;
      }
      long n = h.getDictionary_page_header().getNum_values();
      long u = h.getUncompressed_page_size();
      return n <= 0 || u < 4 * n ? 0 : (u - 4 * n + n - 1) / n;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * Where column chunk {@code chunk} of a row group of {@code rows} rows keeps its pages, when the
   * device decodes them: a flat column of a physical type of 4 or 8 bytes that is {@code type}, or
   * of strings (unless the writer's page statistics count both PLAIN and dictionary data pages),
   * not encrypted, Snappy or stored, in encodings it knows, inside the file before its footer.
   * Whether a string column's data pages are all of one kind is known only once their headers are
   * read ({@code ParquetSource}).
   */
  private static Stored stored(ColumnChunk chunk, SchemaElement element, DataType type, long rows, long fileSize) {
    if (!chunk.isSetMeta_data() || chunk.isSetCrypto_metadata() || chunk.isSetFile_path()) {
      return null;
    }
    ColumnMetaData m = chunk.getMeta_data();
    int width = switch (m.getType()) {
      case INT32, FLOAT -> 4;
      case INT64, DOUBLE -> 8;
      case BYTE_ARRAY -> mixedDataPages(m) ? -1 : ParquetDecode.BYTE_ARRAY;
      default -> -1;
    };
    boolean integer = m.getType() == Type.INT32 || m.getType() == Type.INT64;
    ParquetDecode.Codec codec = switch (m.getCodec()) {
      case UNCOMPRESSED -> ParquetDecode.Codec.UNCOMPRESSED;
      case SNAPPY -> ParquetDecode.Codec.SNAPPY;
      default -> null;
    };
    FieldRepetitionType repetition = element.getRepetition_type();
    long start = m.isSetDictionary_page_offset() && m.getDictionary_page_offset() > 0
        ? Math.min(m.getDictionary_page_offset(), m.getData_page_offset()) : m.getData_page_offset();
    long bytes = m.getTotal_compressed_size();
    if (width < 0 || codec == null || (integer && !signed(element)) || !ParquetDecode.decodes(type, width)
        || repetition == null || repetition == FieldRepetitionType.REPEATED || m.getNum_values() != rows || m.getEncodings() == null
        || !DEVICE_ENCODINGS.containsAll(m.getEncodings()) || start < 4 || bytes <= 0 || bytes > fileSize - 8 - start
        || bytes > Integer.MAX_VALUE) {
      return null;
    }
    return new Stored(start, bytes, width, codec, repetition != FieldRepetitionType.REQUIRED);
  }

  /** Whether the writer's page statistics of {@code m} count data pages of PLAIN values and of dictionary indexes both. */
  private static boolean mixedDataPages(ColumnMetaData m) {
    if (!m.isSetEncoding_stats()) {
      return false;
    }
    java.util.Set<Encoding> data = java.util.EnumSet.noneOf(Encoding.class);
    for (org.apache.parquet.format.PageEncodingStats s : m.getEncoding_stats()) {
      if (s.getPage_type() != org.apache.parquet.format.PageType.DICTIONARY_PAGE && s.getCount() > 0 && s.getEncoding() != null) {
        data.add(s.getEncoding() == Encoding.PLAIN_DICTIONARY ? Encoding.RLE_DICTIONARY : s.getEncoding());
      }
    }
    return data.contains(Encoding.PLAIN) && data.contains(Encoding.RLE_DICTIONARY);
  }

  private static void readFully(FileChannel ch, ByteBuffer into, long position) throws IOException {
    while (into.hasRemaining()) {
      if (ch.read(into, position + into.position()) < 0) {
        throw new IOException("ended while its footer was read");
      }
    }
  }

  private static ValueRange range(ColumnChunk chunk, SchemaElement element, boolean typeOrder, DataType type, long rows) {
    if (!chunk.isSetMeta_data() || chunk.isSetCrypto_metadata() || !chunk.getMeta_data().isSetStatistics()) {
      return null;
    }
    ColumnMetaData m = chunk.getMeta_data();
    Statistics st = m.getStatistics();
    // a flat column has one value (or NULL) a row
    if (m.getNum_values() != rows) {
      return null;
    }
    boolean nullsKnown = st.isSetNull_count() && st.getNull_count() >= 0 && st.getNull_count() <= rows;
    if (nullsKnown && st.getNull_count() == rows) {
      return new ValueRange(null, null, rows > 0, false);
    }
    if (!typeOrder || !st.isSetMin_value() || !st.isSetMax_value()) {
      return null;
    }
    Comparable<?> min = value(st.getMin_value(), m.getType(), element, type);
    Comparable<?> max = value(st.getMax_value(), m.getType(), element, type);
    if (min == null || max == null || ValueRange.compare(min, max) > 0) {
      return null;
    }
    return new ValueRange(min, max, !nullsKnown || st.getNull_count() > 0, true);
  }

  /** A statistics bound as the engine's value of {@code type}, or null where it is not one gpudf orders the same way. */
  private static Comparable<?> value(byte[] bytes, Type physical, SchemaElement element, DataType type) {
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    switch (type.id()) {
      case INT8, INT16, INT32 -> {
        return physical == Type.INT32 && bytes.length == 4 && signed(element) ? (Comparable<?>) (long) b.getInt() : null;
      }
      case INT64 -> {
        return physical == Type.INT64 && bytes.length == 8 && signed(element) ? (Comparable<?>) b.getLong() : null;
      }
      case DATE -> {
        return physical == Type.INT32 && bytes.length == 4 ? (Comparable<?>) b.getInt() : null;
      }
      case STRING -> {
        if (physical != Type.BYTE_ARRAY) {
          return null;
        }
        try {
          return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT).decode(b).toString();
        } catch (CharacterCodingException e) {
          // a bound cut inside a character: no range rather than a wrong one
          return null;
        }
      }
      default -> {
        return null;
      }
    }
  }

  private static boolean signed(SchemaElement e) {
    if (e.isSetLogicalType() && e.getLogicalType().isSetINTEGER()) {
      return e.getLogicalType().getINTEGER().isIsSigned();
    }
    ConvertedType c = e.isSetConverted_type() ? e.getConverted_type() : null;
    return c != ConvertedType.UINT_8 && c != ConvertedType.UINT_16 && c != ConvertedType.UINT_32 && c != ConvertedType.UINT_64;
  }
}
