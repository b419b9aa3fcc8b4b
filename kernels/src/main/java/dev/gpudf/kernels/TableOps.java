package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The kernels' eager operations for a table of either backend: the GPU for a
 * {@link DeviceTable}, the CPU twin for a {@link HostTable}. Physical operators (the SQL engine's,
 * the Spark plugin's) call these so they are written once for both backends. Every result is the
 * caller's to close; the inputs stay the caller's.
 */
public final class TableOps {
  private TableOps() {}

  public static Column evaluate(Exec exec, Table<?> t, Expr e) {
    return t instanceof DeviceTable d ? Evaluate.evaluate(exec, d, e) : Evaluate.evaluate(exec, (HostTable) t, e);
  }

  public static Table<?> filter(Exec exec, Table<?> t, Column mask) {
    return t instanceof DeviceTable d ? Filter.filter(exec, d, (DeviceColumn) mask)
        : Filter.filter(exec, (HostTable) t, (HostColumn) mask);
  }

  /**
   * The rows of {@code out} where {@code condition} over {@code t} holds ({@code out}: the same
   * rows as {@code t}, maybe fewer columns); on the GPU by a mask, on the CPU conjunct by conjunct
   * where the condition is a conjunction ({@link Filter#filter(Exec, HostTable, Expr, HostTable)}).
   */
  public static Table<?> filter(Exec exec, Table<?> t, Expr condition, Table<?> out) {
    if (t instanceof DeviceTable d) {
      try (Filter.Selection kept = Filter.select(exec, d, condition)) {
        return Filter.filter(exec, out, kept);
      }
    }
    return Filter.filter(exec, (HostTable) t, condition, (HostTable) out);
  }

  public static Table<?> sort(Exec exec, Table<?> t, List<SortKey> keys) {
    return t instanceof DeviceTable d ? Sort.sort(exec, d, keys) : Sort.sort(exec, (HostTable) t, keys);
  }

  public static Table<?> topN(Exec exec, Table<?> t, List<SortKey> keys, int limit) {
    return t instanceof DeviceTable d ? Sort.topN(exec, d, keys, limit) : Sort.topN(exec, (HostTable) t, keys, limit);
  }

  public static Table<?> slice(Exec exec, Table<?> t, int offset, int length) {
    return t instanceof DeviceTable d ? Slice.slice(exec, d, offset, length) : Slice.slice(exec, (HostTable) t, offset, length);
  }

  public static Scalar reduce(Exec exec, Column c, Reduction op) {
    return Reduce.reduce(exec, c, op);
  }

  /** {@code root} copied into a table on {@code gpu}, or shared into a host table when it is null; the caller keeps {@code root}. */
  /**
   * {@code host} (borrowed) as a table of its own on {@code gpu}, or on the host (null) with every
   * column holding its vector ({@link HostColumn#decoded}): a resident copy, in memory the
   * allocators count. The caller closes it.
   */
  public static Table<?> load(Gpu gpu, HostTable host) {
    if (gpu != null) {
      try (CudaStream stream = gpu.newStream()) {
        return DeviceTable.fromHost(gpu, host, stream);
      }
    }
    List<HostColumn> columns = new ArrayList<>();
    try {
      for (int c = 0; c < host.columnCount(); c++) {
        columns.add(host.column(c).decoded());
      }
    } catch (RuntimeException e) {
      columns.forEach(HostColumn::close);
      throw e;
    }
    return new HostTable(host.names(), columns, host.rowCount());
  }

  public static Table<?> load(Gpu gpu, VectorSchemaRoot root) {
    if (gpu == null) {
      return HostTable.fromArrow(root);
    }
    try (CudaStream stream = gpu.newStream()) {
      return DeviceTable.fromArrow(gpu, root, stream);
    }
  }

  /**
   * The rows of {@code parts} one after the other, on their backend, under {@code names} (the
   * parts may differ in names and in nullability only); the caller keeps the parts and closes
   * the result. Strings past a column's 2 GiB are a {@link dev.gpudf.columnar.error.UserException}.
   */
  public static Table<?> concat(Exec exec, List<? extends Table<?>> parts, List<String> names) {
    List<Table<?>> named = new ArrayList<>();
    try {
      for (Table<?> p : parts) {
        named.add(renamed(exec, p, names));
      }
      return named.get(0) instanceof DeviceTable ? Concat.concat(exec, named.toArray(DeviceTable[]::new))
          : Concat.concat(exec, named.toArray(HostTable[]::new));
    } finally {
      named.forEach(Table::close);
    }
  }

  /** {@code t}'s columns (retained, not copied) under {@code names}; the caller closes the result. */
  public static Table<?> renamed(Exec exec, Table<?> t, List<String> names) {
    List<Column> cols = new ArrayList<>();
    for (int i = 0; i < t.columnCount(); i++) {
      t.column(i).retain();
      cols.add(t.column(i));
    }
    return table(exec, t, names, cols, t.rowCount());
  }

  /**
   * Columns {@code columns} of {@code t}, in that order, under their names (retained, not copied);
   * the caller closes the result.
   */
  public static Table<?> columns(Exec exec, Table<?> t, int[] columns) {
    List<Column> cols = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (int c : columns) {
      t.column(c).retain();
      cols.add(t.column(c));
      names.add(t.names().get(c));
    }
    return table(exec, t, names, cols, t.rowCount());
  }

  /** A table of {@code like}'s backend over {@code columns}, which it takes ownership of. */
  public static Table<?> table(Exec exec, Table<?> like, List<String> names, List<? extends Column> columns, int rows) {
    if (like instanceof DeviceTable) {
      List<DeviceColumn> cols = new ArrayList<>();
      columns.forEach(c -> cols.add((DeviceColumn) c));
      return new DeviceTable(exec.gpu(), names, cols, rows);
    }
    List<HostColumn> cols = new ArrayList<>();
    columns.forEach(c -> cols.add((HostColumn) c));
    return new HostTable(names, cols, rows);
  }

  /** {@link Window#compute} on {@code sorted}'s backend; the caller owns the columns. */
  public static List<? extends Column> window(Exec exec, Table<?> sorted, int[] partition, List<SortKey> order,
      List<Window.Function> functions) {
    return sorted instanceof DeviceTable d ? Window.compute(exec, d, partition, order, functions)
        : Window.compute(exec, (HostTable) sorted, partition, order, functions);
  }

  /** {@link GroupBy#aggregate} on {@code in}'s backend; the caller closes the result. */
  public static Table<?> groupBy(Exec exec, Table<?> in, int[] keys, List<GroupBy.Agg> aggs, List<String> names) {
    return in instanceof DeviceTable d ? GroupBy.aggregate(exec, d, keys, aggs, names)
        : GroupBy.aggregate(exec, (HostTable) in, keys, aggs, names);
  }

  /** {@link Join#join(Exec, HostTable, HostTable, int[], int[], Join.Kind, List, Expr)} on the backend both sides are on. */
  public static Table<?> join(Exec exec, Table<?> left, Table<?> right, int[] leftKeys, int[] rightKeys, Join.Kind kind,
      List<String> names, Expr residual) {
    return left instanceof DeviceTable l ? Join.join(exec, l, (DeviceTable) right, leftKeys, rightKeys, kind, names, residual)
        : Join.join(exec, (HostTable) left, (HostTable) right, leftKeys, rightKeys, kind, names, residual);
  }
}
