package dev.gpudf.formats;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.ParquetDecode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Some columns of one Parquet file, as its footer places them in its row groups, for a reader given
 * a byte range of the file rather than the whole of it (a split of Spark's, which cuts files by
 * bytes): {@link #inRange} names the row groups the range holds by the rule Parquet's Java reader
 * follows, so that a file read in ranges by this reader, by that one, or by both, gives each row
 * group once; {@link #readEncoded} gives a column of a run of them as stored pages for the device's
 * decoder. Holds no open file: each read opens it, and fails naming it when it changed since.
 */
public final class ParquetRowGroups {
  private final FileStamp stamp;
  private final List<String> names;
  private final List<DataType> types;
  private final List<ParquetFooter.RowGroup> groups;
  private final java.util.Map<String, String> keyValues;

  private ParquetRowGroups(FileStamp stamp, List<String> names, List<DataType> types, List<ParquetFooter.RowGroup> groups,
      java.util.Map<String, String> keyValues) {
    this.stamp = stamp;
    this.keyValues = java.util.Map.copyOf(keyValues);
    this.names = List.copyOf(names);
    this.types = List.copyOf(types);
    this.groups = groups;
  }

  /**
   * Columns {@code names} of gpudf types {@code types} of {@code file}, from its footer; null, with
   * nothing read but the footer, when this reader does not take the file: its footer cannot be read,
   * a column is missing or stored as another type, or a column chunk is stored in a way the device
   * does not decode (by what the footer says; see {@link #readEncoded} for what page headers may
   * still refuse). The caller then reads the file some other way, which reports what is wrong with
   * it if anything is.
   */
  public static ParquetRowGroups open(Path file, List<String> names, List<DataType> types) {
    if (names.size() != types.size()) {
      throw new IllegalArgumentException(names.size() + " names for " + types.size() + " types");
    }
    try {
      FileStamp stamp = FileStamp.of(file);
      java.util.Map<String, String> keyValues = new java.util.HashMap<>();
      List<ParquetFooter.RowGroup> groups = ParquetFooter.locate(file, names, types, keyValues);
      if (groups == null) {
        return null;
      }
      for (ParquetFooter.RowGroup g : groups) {
        if (g.midpoint() == Long.MIN_VALUE || g.rows() > Integer.MAX_VALUE || g.stored().contains(null)) {
          return null;
        }
      }
      keyValues.values().removeIf(java.util.Objects::isNull);
      return new ParquetRowGroups(stamp, names, types, groups, keyValues);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The file's size when it was opened. */
  public long fileSize() {
    return stamp.size();
  }

  /** The value of {@code key} in the footer's key-value metadata, or null (what wrote the file, say). */
  public String keyValue(String key) {
    return keyValues.get(key);
  }

  /** How many row groups the file has. */
  public int count() {
    return groups.size();
  }

  /** Rows of row group {@code group}. */
  public int rows(int group) {
    return (int) groups.get(group).rows();
  }

  /**
   * What the footer's statistics say of column {@code column} in row group {@code group}, or null
   * where they say nothing gpudf orders the same way ({@link ParquetFooter}).
   */
  public ValueRange range(int group, int column) {
    return groups.get(group).ranges().get(column);
  }

  /**
   * The row groups a reader of bytes {@code [start, start + length)} of the file reads, in order:
   * those whose middle ({@link ParquetFooter.RowGroup#midpoint}) lies in it. Ranges that tile the
   * file take each row group once.
   */
  public List<Integer> inRange(long start, long length) {
    List<Integer> out = new ArrayList<>();
    long end = length > Long.MAX_VALUE - start ? Long.MAX_VALUE : start + length;
    for (int g = 0; g < groups.size(); g++) {
      long mid = groups.get(g).midpoint();
      if (mid >= start && mid < end) {
        out.add(g);
      }
    }
    return out;
  }

  /**
   * Column {@code column} (an index into the names it was opened with) of row groups {@code first}
   * .. {@code end - 1} as stored pages, read into {@code into}; the caller closes it. Null when a
   * page header names something the decoder does not take (which the footer did not tell); a
   * damaged page header, or a file that changed since it was opened, is a {@link UserException}
   * naming the file and row group.
   */
  public ParquetDecode.Chunk readEncoded(int first, int end, int column, BufferAllocator into) {
    if (first < 0 || end > groups.size() || first >= end) {
      throw new IllegalArgumentException("row groups " + first + " .. " + end + " of " + groups.size());
    }
    long rows = 0;
    List<ParquetFooter.Stored> stored = new ArrayList<>();
    for (int g = first; g < end; g++) {
      rows += groups.get(g).rows();
      stored.add(groups.get(g).stored().get(column));
    }
    if (rows > Integer.MAX_VALUE) {
      throw new UserException(stamp.file() + ": row groups " + first + " .. " + (end - 1) + " hold " + rows
          + " rows, more than one batch takes");
    }
    return ParquetPages.read(stamp, stored, first, names.get(column), types.get(column), (int) rows, into);
  }
}
