package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;

/**
 * One chunk of a {@link Catalog} table: its columns, each resident in the backend's memory or,
 * for a GPU catalog, spilled to host memory and brought back when a query reads it. A chunk of a
 * table kept in files ({@link #ofFile}) starts with no column: each is read into it when a query
 * first needs it ({@link #fill}) and, past the device budget, dropped rather than spilled, since
 * its file holds it. The chunk holds one reference to each resident column and owns its spilled
 * copies; {@link #close} drops them. Not thread-safe: the catalog's lock guards it.
 */
final class CatalogChunk {
  private final List<String> names;
  private final List<DataType> types;
  private final int rows;
  private final Column[] resident;
  private final HostTable[] spilled;
  // the device bytes of each spilled column, which it takes again when it comes back
  private final long[] spilledBytes;
  private final long[] lastUse;
  // a chunk of a file: a column not resident is read again from the file, never spilled
  private final boolean ofFile;
  // columns of a file chunk that the budget dropped after they were read
  private final boolean[] dropped;

  private CatalogChunk(List<String> names, List<DataType> types, int rows, boolean ofFile) {
    this.names = names;
    this.types = types;
    this.rows = rows;
    this.ofFile = ofFile;
    resident = new Column[names.size()];
    spilled = new HostTable[names.size()];
    spilledBytes = new long[names.size()];
    lastUse = new long[names.size()];
    dropped = new boolean[names.size()];
  }

  /** A chunk of {@code rows} rows of a table kept in files, holding none of its columns yet. */
  static CatalogChunk ofFile(List<String> names, List<DataType> types, int rows) {
    return new CatalogChunk(names, types, rows, true);
  }

  /** The columns of {@code t}, retained: the caller still closes {@code t}. */
  CatalogChunk(Table<?> t) {
    this(t.names(), t.types(), t.rowCount(), false);
    for (int c = 0; c < resident.length; c++) {
      t.column(c).retain();
      resident[c] = t.column(c);
    }
  }

  /**
   * Those of {@code columns} that this chunk of a file does not hold now (neither resident nor
   * spilled), each once: a column named twice must not be filled twice (the first would leak).
   */
  int[] absent(int[] columns) {
    return java.util.Arrays.stream(columns).distinct().filter(c -> resident[c] == null && spilled[c] == null).toArray();
  }

  /**
   * Takes column {@code i} of {@code t} (retained; the caller still closes {@code t}) as column
   * {@code columns[i]}, where that one is {@link #absent} (another query may have read it since
   * this read began: the one held stays).
   */
  void fill(int[] columns, Table<?> t) {
    if (t.rowCount() != rows || t.columnCount() != columns.length) {
      throw new dev.gpudf.columnar.error.InternalException("a chunk of " + rows + " rows was filled with " + t.rowCount()
          + " rows of " + t.columnCount() + " columns for " + columns.length);
    }
    for (int i = 0; i < columns.length; i++) {
      if (resident[columns[i]] == null && spilled[columns[i]] == null) {
        t.column(i).retain();
        resident[columns[i]] = t.column(i);
      }
    }
  }

  /** Whether column {@code c} of this file chunk was read before and dropped since. */
  boolean dropped(int c) {
    return dropped[c];
  }

  /** Device bytes columns {@code columns} hold while resident. */
  long deviceBytes(int[] columns) {
    return java.util.Arrays.stream(columns).mapToLong(this::deviceBytes).sum();
  }

  List<String> names() {
    return names;
  }

  List<DataType> types() {
    return types;
  }

  int rows() {
    return rows;
  }

  int columnCount() {
    return resident.length;
  }

  /** The character bytes of string column {@code c}, resident or spilled. */
  long stringBytes(int c) {
    if (resident[c] instanceof DeviceColumn d) {
      return d.data().size();
    }
    HostColumn h = resident[c] != null ? (HostColumn) resident[c] : spilled[c].column(0);
    return ((BaseVariableWidthVector) h.vector()).sizeOfValueBuffer();
  }

  /**
   * Columns {@code columns} as a table of the backend, retained for the caller, who closes it;
   * spilled columns are first copied back to {@code gpu} (the caller has made room for them).
   * {@code tick} marks them used, for {@link Catalog}'s least-recently-used spilling.
   */
  Table<?> table(Gpu gpu, int[] columns, long tick) {
    List<String> picked = new ArrayList<>();
    List<Column> cols = new ArrayList<>();
    try {
      for (int c : columns) {
        if (resident[c] == null && spilled[c] == null) {
          throw new dev.gpudf.columnar.error.InternalException("column " + names.get(c) + " of a file chunk was used before"
              + " it was read");
        }
        if (resident[c] == null) {
          restore(gpu, c);
        }
        lastUse[c] = tick;
        resident[c].retain();
        cols.add(resident[c]);
        picked.add(names.get(c));
      }
    } catch (RuntimeException e) {
      cols.forEach(Column::close);
      throw e;
    }
    if (gpu == null) {
      return new HostTable(picked, cols.stream().map(HostColumn.class::cast).toList(), rows);
    }
    return new DeviceTable(gpu, picked, cols.stream().map(DeviceColumn.class::cast).toList(), rows);
  }

  /** The indexes of every column. */
  int[] allColumns() {
    return java.util.stream.IntStream.range(0, resident.length).toArray();
  }

  /** Device bytes column {@code c} holds while resident (0 on the host backend or when spilled). */
  long deviceBytes(int c) {
    return resident[c] == null ? 0 : deviceBytes(resident[c]);
  }

  /**
   * The bytes column {@code c} takes in the backend's memory: its device buffers, or its Arrow
   * buffers on the host backend; for a spilled column, the device bytes it takes when it comes back.
   */
  long storedBytes(int c) {
    return resident[c] != null ? storedBytes(resident[c]) : spilledBytes[c];
  }

  /** The bytes of {@code column}'s buffers, on the device or the host. */
  static long storedBytes(Column column) {
    return column instanceof HostColumn h ? h.vector().getBufferSize() : deviceBytes(column);
  }

  /** Device bytes of {@code column}'s buffers (0 for a host column). */
  static long deviceBytes(Column column) {
    if (!(column instanceof DeviceColumn d)) {
      return 0;
    }
    return size(d.data()) + size(d.offsets()) + size(d.validity());
  }

  /** Device bytes of the columns among {@code columns} that are spilled now. */
  long spilledDeviceBytes(int[] columns) {
    long bytes = 0;
    for (int c : columns) {
      bytes += spilledBytes[c];
    }
    return bytes;
  }

  /** Device bytes column {@code c} takes when it comes back (0 unless spilled). */
  long spilledBytes(int c) {
    return spilledBytes[c];
  }

  private static long size(DeviceBuffer b) {
    return b == null ? 0 : b.size();
  }

  /** Whether column {@code c} is on the device and read by no query now, so that it may spill. */
  boolean spillable(int c) {
    return resident[c] instanceof DeviceColumn d && d.refCount() == 1;
  }

  /** When column {@code c} was last read (0: never). */
  long lastUse(int c) {
    return lastUse[c];
  }

  /**
   * Copies device column {@code c} to host memory from {@code allocator} and frees its device
   * memory; when the copy fails (the host is full too), the column stays as it was. A column of a
   * file is only freed: its file is its copy.
   */
  void spill(Gpu gpu, int c, BufferAllocator allocator) {
    if (ofFile) {
      resident[c].close();
      resident[c] = null;
      dropped[c] = true;
      return;
    }
    DeviceColumn d = (DeviceColumn) resident[c];
    d.retain();
    try (DeviceTable one = new DeviceTable(gpu, List.of(names.get(c)), List.of(d), rows)) {
      spilled[c] = one.toHost(allocator);
    }
    spilledBytes[c] = deviceBytes(d);
    resident[c] = null;
    d.close();
  }

  private void restore(Gpu gpu, int c) {
    try (CudaStream stream = gpu.newStream(); DeviceTable one = DeviceTable.fromHost(gpu, spilled[c], stream)) {
      one.column(0).retain();
      resident[c] = one.column(0);
    }
    spilled[c].close();
    spilled[c] = null;
    spilledBytes[c] = 0;
  }

  void close() {
    for (int c = 0; c < resident.length; c++) {
      if (resident[c] != null) {
        resident[c].close();
      }
      if (spilled[c] != null) {
        spilled[c].close();
      }
    }
  }
}
