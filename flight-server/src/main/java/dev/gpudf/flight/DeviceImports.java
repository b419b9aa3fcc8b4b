package dev.gpudf.flight;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.DeviceIpc;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.InputCheck;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.files.TableNames;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The server side of {@link DeviceHandOff#IMPORT}: another process's device buffers become a
 * table. Everything in the request is untrusted: its shape is checked first (names, types, row
 * and null counts, every region inside its allocation and large enough for its rows), each
 * allocation's size against the driver's once mapped, then the buffers are copied device to
 * device into gpudf's pool and the copies checked ({@link InputCheck}: offsets, UTF-8, decimal
 * digits, null counts), so that the producer cannot change what was checked. A failure anywhere
 * leaves the catalog as it was. The producer's allocations are mapped through {@link
 * ProducerMappings}, which may keep them mapped between imports. Owned by the producer.
 */
final class DeviceImports {
  /** The most columns, and allocations, one import may name. */
  static final int MOST_COLUMNS = 4096;
  /** The most handles one unmap may name. */
  static final int MOST_UNMAPPED = ProducerMappings.MOST_KEPT;
  private final GpuSession session;
  private final ProducerMappings mappings;

  /** Imports into {@code session}'s catalog, mapping through {@code mappings} (the caller's, which it closes). */
  DeviceImports(GpuSession session, ProducerMappings mappings) {
    this.session = session;
    this.mappings = mappings;
  }

  /** Answers an {@link DeviceHandOff#UNMAP} action: {@code body} is a JSON {@link DeviceHandOff.UnmapRequest}. */
  DeviceHandOff.UnmapResult unmap(byte[] body) {
    DeviceHandOff.UnmapRequest request;
    try {
      request = DeviceHandOff.JSON.readValue(body, DeviceHandOff.UnmapRequest.class);
    } catch (IOException e) {
      throw new UserException("an unmap request is a JSON object {\"handles\": [...]}: " + e.getMessage(), e);
    }
    if (request.handles() == null || request.handles().size() > MOST_UNMAPPED || request.handles().contains(null)) {
      throw new UserException("an unmap names from 0 to " + MOST_UNMAPPED + " handles, none of them null");
    }
    int unmapped = mappings.unmap(request.handles());
    return new DeviceHandOff.UnmapResult(unmapped, mappings.kept());
  }

  /** Answers an {@link DeviceHandOff#IMPORT} action: {@code body} is a JSON {@link DeviceHandOff.ImportRequest}. */
  DeviceHandOff.ImportResult ingest(byte[] body) {
    Gpu gpu = session.gpu();
    if (gpu == null) {
      throw new NotSupportedException(DeviceHandOff.IMPORT + " needs the GPU backend; this server runs the CPU backend"
          + " (send the rows as Arrow with bulk ingest)");
    }
    long start = System.nanoTime();
    DeviceHandOff.ImportRequest request;
    try {
      request = DeviceHandOff.JSON.readValue(body, DeviceHandOff.ImportRequest.class);
    } catch (IOException e) {
      throw new UserException("an import request is a JSON object {\"table\", \"mode\", \"rows\", \"allocations\","
          + " \"columns\"}: " + e.getMessage(), e);
    }
    String table = checkTable(request);
    String mode = request.mode() == null ? "create" : request.mode().toLowerCase(Locale.ROOT);
    boolean exists = session.catalog().names().contains(table);
    switch (mode) {
      case "create" -> {
        if (exists) {
          throw new UserException("table '" + table + "' already exists (import with mode append or replace)");
        }
      }
      case "append", "replace" -> {
        if (!exists) {
          throw new UserException("no table '" + table + "' to " + mode + " into");
        }
      }
      default -> throw new UserException("an import's mode is create, append or replace, not '" + request.mode() + "'");
    }
    List<DataType> types = checkShape(request, table);
    long toHostBefore = gpu.copier().bytesToHost();
    Tally tally = new Tally();
    try (DeviceTable rows = copy(gpu, request, types, table, tally)) {
      long t = System.nanoTime();
      switch (mode) {
        case "create" -> session.catalog().register(table, rows);
        case "replace" -> session.catalog().replace(table, rows);
        default -> session.insert(table, rows);
      }
      tally.table = System.nanoTime() - t;
    }
    return new DeviceHandOff.ImportResult(table, request.rows(), tally.copied, gpu.copier().bytesToHost() - toHostBefore,
        (System.nanoTime() - start) / 1e9, tally.map / 1e9, tally.copy / 1e9, tally.check / 1e9, tally.table / 1e9,
        tally.opened, tally.reused);
  }

  /** What one import has done so far: bytes copied, and nanoseconds per phase. */
  private static final class Tally {
    long copied;
    long map;
    long copy;
    long check;
    long table;
    int opened;
    int reused;
  }

  private static String checkTable(DeviceHandOff.ImportRequest request) {
    if (request.table() == null || request.table().isBlank()) {
      throw new UserException("an import needs \"table\"");
    }
    String table = request.table().toLowerCase(Locale.ROOT);
    TableNames.check(table);
    return table;
  }

  /**
   * The column types of {@code request}, once its shape holds together: rows and columns within
   * bounds, names unique, each type known with its buffers where its layout needs them, each
   * region inside its allocation (as the producer states its size) and large enough.
   */
  static List<DataType> checkShape(DeviceHandOff.ImportRequest r, String table) {
    String what = "import into '" + table + "'";
    if (r.rows() == null || r.rows() < 0 || r.rows() >= Integer.MAX_VALUE) {
      throw new UserException(what + ": \"rows\" must be given, from 0 to " + (Integer.MAX_VALUE - 1) + ", not " + r.rows());
    }
    long rows = r.rows();
    if (r.columns() == null || r.columns().isEmpty() || r.columns().size() > MOST_COLUMNS) {
      throw new UserException(what + ": from 1 to " + MOST_COLUMNS + " columns, not "
          + (r.columns() == null ? 0 : r.columns().size()));
    }
    if (r.allocations() == null || r.allocations().size() > MOST_COLUMNS * 3) {
      throw new UserException(what + ": \"allocations\" must list at most " + MOST_COLUMNS * 3 + " allocations");
    }
    for (int i = 0; i < r.allocations().size(); i++) {
      DeviceHandOff.Allocation a = r.allocations().get(i);
      if (a == null || a.handle() == null || a.size() < 0) {
        throw new UserException(what + ": allocation " + i + " needs a handle and a size of 0 or more bytes");
      }
    }
    Set<String> names = new HashSet<>();
    List<DataType> types = new ArrayList<>();
    for (int k = 0; k < r.columns().size(); k++) {
      DeviceHandOff.Column c = r.columns().get(k);
      if (c == null || c.name() == null || c.name().isEmpty()) {
        throw new UserException(what + ": column " + (k + 1) + " has no name");
      }
      String column = what + ": column '" + c.name() + "'";
      if (!names.add(c.name().toLowerCase(Locale.ROOT))) {
        throw new UserException(column + " is named twice");
      }
      DataType type = type(c, column);
      types.add(type);
      if (c.nullCount() < 0 || c.nullCount() > rows) {
        throw new UserException(column + " has " + c.nullCount() + " NULL rows of " + rows);
      }
      if (c.nullCount() > 0 && c.validity() == null) {
        throw new UserException(column + " has NULL rows and no validity bitmap");
      }
      if ((type.id() == TypeId.STRING) != (c.offsets() != null)) {
        throw new UserException(column + (type.id() == TypeId.STRING ? " is STRING and has no offsets" : " is "
            + type.id() + ", which has no offsets"));
      }
      if (type.isFixedWidth() && type.id() != TypeId.BOOL && c.byteWidth() != type.byteWidth()) {
        throw new UserException(column + " is " + type + ", whose values gpudf keeps in " + type.byteWidth()
            + " bytes, not " + c.byteWidth());
      }
      region(r, c.data(), type.id() == TypeId.STRING ? 0 : valueBytes(type, rows), column + "'s data");
      if (type.id() == TypeId.STRING && c.data().size() > Integer.MAX_VALUE) {
        throw new UserException(column + " has " + c.data().size() + " bytes of text, more than a column's 2 GiB");
      }
      if (c.offsets() != null) {
        region(r, c.offsets(), 4 * (rows + 1), column + "'s offsets");
      }
      if (c.validity() != null) {
        region(r, c.validity(), DeviceColumn.bitmapBytes(rows), column + "'s validity");
      }
    }
    return types;
  }

  private static DataType type(DeviceHandOff.Column c, String column) {
    if ("DECIMAL".equals(c.type()) && (c.precision() < 1 || c.precision() > 38 || c.scale() < 0 || c.scale() > c.precision())) {
      throw new UserException(column + " has type DECIMAL(" + c.precision() + ", " + c.scale() + "), which cannot be");
    }
    try {
      return DeviceHandOff.type(c);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new UserException(column + " has type " + c.type() + ("TIMESTAMP".equals(c.type())
          ? " with time unit " + c.timeUnit() : "") + ", which gpudf does not know", e);
    }
  }

  /** Region {@code g} names an allocation of {@code r}, lies inside it, and holds at least {@code least} bytes. */
  private static void region(DeviceHandOff.ImportRequest r, DeviceHandOff.Region g, long least, String what) {
    if (g == null) {
      throw new UserException(what + " are missing");
    }
    if (g.allocation() < 0 || g.allocation() >= r.allocations().size()) {
      throw new UserException(what + " name allocation " + g.allocation() + " of " + r.allocations().size());
    }
    long size = r.allocations().get(g.allocation()).size();
    if (g.offset() < 0 || g.size() < 0 || g.offset() > size || g.size() > size - g.offset()) {
      throw new UserException(what + " lie at bytes [" + g.offset() + ", " + g.offset() + " + " + g.size() + ") of allocation "
          + g.allocation() + ", which holds " + size);
    }
    if (g.size() < least) {
      throw new UserException(what + " hold " + g.size() + " bytes, fewer than the " + least + " its rows need");
    }
  }

  /**
   * The request's rows copied into this process's pool and checked; the caller closes the table.
   * Counts bytes and times in {@code tally}. The producer's memory is unmapped before this returns.
   */
  private DeviceTable copy(Gpu gpu, DeviceHandOff.ImportRequest r, List<DataType> types, String table, Tally tally) {
    ProducerMappings.Use use = new ProducerMappings.Use();
    boolean keep = Boolean.TRUE.equals(r.keepMapped());
    List<DeviceColumn> columns = new ArrayList<>();
    int rows = Math.toIntExact(r.rows());
    boolean failed = true;
    try (Exec exec = Exec.onGpu(gpu, session.allocator())) {
      long t = System.nanoTime();
      try {
        for (int i = 0; i < r.allocations().size(); i++) {
          DeviceHandOff.Allocation a = r.allocations().get(i);
          byte[] handle;
          try {
            handle = Base64.getDecoder().decode(a.handle());
          } catch (IllegalArgumentException e) {
            throw new UserException("import into '" + table + "': allocation " + i + "'s handle is not base64", e);
          }
          mappings.acquire(gpu.device(), handle, a.size(), keep, use);
        }
        tally.map += System.nanoTime() - t;
        t = System.nanoTime();
        List<DeviceBuffer> views = new ArrayList<>();
        try {
          for (int k = 0; k < types.size(); k++) {
            columns.add(copy(exec, use.mappings, r.columns().get(k), types.get(k), rows, views, tally));
          }
          exec.stream().synchronize();
        } finally {
          // each view's close waits for the copies queued on the stream
          views.forEach(DeviceBuffer::close);
        }
        tally.copy += System.nanoTime() - t;
        failed = false;
      } finally {
        t = System.nanoTime();
        mappings.release(use, failed);
        tally.map += System.nanoTime() - t;
        tally.opened = use.opened;
        tally.reused = use.reused;
      }
      long checked = System.nanoTime();
      List<String> names = new ArrayList<>();
      for (int k = 0; k < columns.size(); k++) {
        String name = r.columns().get(k).name();
        names.add(name);
        InputCheck.check(exec, columns.get(k), "import into '" + table + "': column '" + name + "'");
        DeviceColumn laidOut = InputCheck.laidOut(exec, columns.get(k));
        if (laidOut != columns.get(k)) {
          columns.set(k, laidOut).close();
        }
      }
      exec.stream().synchronize();
      tally.check += System.nanoTime() - checked;
      return new DeviceTable(gpu, names, columns, rows);
    } catch (RuntimeException e) {
      columns.forEach(DeviceColumn::close);
      throw e;
    }
  }

  /** Bytes of a fixed-width column's values (a BOOL's bitmap) for {@code rows} rows. */
  private static long valueBytes(DataType type, long rows) {
    return type.id() == TypeId.BOOL ? DeviceColumn.bitmapBytes(rows) : rows * type.byteWidth();
  }

  /** Column {@code c} of {@code rows} rows copied from the mappings into the pool (the copies queued on the exec's stream). */
  private static DeviceColumn copy(Exec exec, List<DeviceIpc.Mapping> mappings, DeviceHandOff.Column c, DataType type, int rows,
      List<DeviceBuffer> views, Tally tally) {
    long dataBytes = type.id() == TypeId.STRING ? c.data().size() : valueBytes(type, rows);
    List<DeviceBuffer> own = new ArrayList<>(3);
    try {
      DeviceBuffer data = copy(exec, mappings, c.data(), dataBytes, views, own, tally);
      DeviceBuffer offsets = c.offsets() == null ? null : copy(exec, mappings, c.offsets(), 4L * (rows + 1), views, own, tally);
      DeviceBuffer validity = c.validity() == null ? null
          : copy(exec, mappings, c.validity(), DeviceColumn.bitmapBytes(rows), views, own, tally);
      return new DeviceColumn(type, rows, c.nullCount(), data, offsets, validity);
    } catch (RuntimeException e) {
      own.forEach(DeviceBuffer::close);
      throw e;
    }
  }

  /** A copy, in the pool, of the first {@code bytes} of region {@code g}: the copy goes into {@code own}, the view of the mapping into {@code views}. */
  private static DeviceBuffer copy(Exec exec, List<DeviceIpc.Mapping> mappings, DeviceHandOff.Region g, long bytes,
      List<DeviceBuffer> views, List<DeviceBuffer> own, Tally tally) {
    DeviceBuffer view = mappings.get(g.allocation()).buffer(g.offset(), bytes, exec.stream());
    views.add(view);
    DeviceBuffer to = exec.allocate(bytes);
    own.add(to);
    exec.copy(to, 0, view, 0, bytes);
    tally.copied += bytes;
    return to;
  }
}
