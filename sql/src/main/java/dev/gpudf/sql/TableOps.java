package dev.gpudf.sql;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.Concat;
import dev.gpudf.kernels.Evaluate;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.GroupBy;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Filter;
import dev.gpudf.kernels.Reduce;
import dev.gpudf.kernels.Reduction;
import dev.gpudf.kernels.Scalar;
import dev.gpudf.kernels.Slice;
import dev.gpudf.kernels.Sort;
import dev.gpudf.kernels.SortKey;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The kernels' eager operations for a table of either backend: the GPU for a
 * {@link DeviceTable}, the CPU twin for a {@link HostTable}. Physical operators call these so
 * they are written once for both backends.
 */
final class TableOps {
  private TableOps() {}

  static Column evaluate(Exec exec, Table<?> t, Expr e) {
    return t instanceof DeviceTable d ? Evaluate.evaluate(exec, d, e) : Evaluate.evaluate(exec, (HostTable) t, e);
  }

  static Table<?> filter(Exec exec, Table<?> t, Column mask) {
    return t instanceof DeviceTable d ? Filter.filter(exec, d, (DeviceColumn) mask)
        : Filter.filter(exec, (HostTable) t, (HostColumn) mask);
  }

  static Table<?> sort(Exec exec, Table<?> t, List<SortKey> keys) {
    return t instanceof DeviceTable d ? Sort.sort(exec, d, keys) : Sort.sort(exec, (HostTable) t, keys);
  }

  static Table<?> topN(Exec exec, Table<?> t, List<SortKey> keys, int limit) {
    return t instanceof DeviceTable d ? Sort.topN(exec, d, keys, limit) : Sort.topN(exec, (HostTable) t, keys, limit);
  }

  static Table<?> slice(Exec exec, Table<?> t, int offset, int length) {
    return t instanceof DeviceTable d ? Slice.slice(exec, d, offset, length) : Slice.slice(exec, (HostTable) t, offset, length);
  }

  static Scalar reduce(Exec exec, Column c, Reduction op) {
    return Reduce.reduce(exec, c, op);
  }

  /** {@code root} copied into a table on {@code gpu}, or shared into a host table when it is null; the caller keeps {@code root}. */
  static Table<?> load(Gpu gpu, VectorSchemaRoot root) {
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
  static Table<?> concat(Exec exec, List<? extends Table<?>> parts, List<String> names) {
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
  static Table<?> renamed(Exec exec, Table<?> t, List<String> names) {
    List<Column> cols = new ArrayList<>();
    for (int i = 0; i < t.columnCount(); i++) {
      t.column(i).retain();
      cols.add(t.column(i));
    }
    return table(exec, t, names, cols, t.rowCount());
  }

  /** A table of {@code like}'s backend over {@code columns}, which it takes ownership of. */
  static Table<?> table(Exec exec, Table<?> like, List<String> names, List<? extends Column> columns, int rows) {
    if (like instanceof DeviceTable) {
      List<DeviceColumn> cols = new ArrayList<>();
      columns.forEach(c -> cols.add((DeviceColumn) c));
      return new DeviceTable(exec.gpu(), names, cols, rows);
    }
    List<HostColumn> cols = new ArrayList<>();
    columns.forEach(c -> cols.add((HostColumn) c));
    return new HostTable(names, cols, rows);
  }

  /** {@link dev.gpudf.kernels.Window#compute} on {@code sorted}'s backend; the caller owns the columns. */
  static List<? extends Column> window(Exec exec, Table<?> sorted, int[] partition, List<SortKey> order,
      List<dev.gpudf.kernels.Window.Function> functions) {
    return sorted instanceof DeviceTable d ? dev.gpudf.kernels.Window.compute(exec, d, partition, order, functions)
        : dev.gpudf.kernels.Window.compute(exec, (HostTable) sorted, partition, order, functions);
  }

  /** {@link GroupBy#aggregate} on {@code in}'s backend; the caller closes the result. */
  static Table<?> groupBy(Exec exec, Table<?> in, int[] keys, List<GroupBy.Agg> aggs, List<String> names) {
    return in instanceof DeviceTable d ? GroupBy.aggregate(exec, d, keys, aggs, names)
        : GroupBy.aggregate(exec, (HostTable) in, keys, aggs, names);
  }

  /**
   * {@code op} over {@code inputs} on the host, for an operator that has only a CPU twin: device
   * inputs are copied to the host, and the result goes back to where the first input was. The
   * caller keeps the inputs and closes the result.
   */
  static Table<?> viaHost(QueryContext ctx, List<? extends Table<?>> inputs,
      java.util.function.Function<List<HostTable>, HostTable> op) {
    List<HostTable> host = new ArrayList<>();
    try {
      for (Table<?> t : inputs) {
        if (t instanceof HostTable h) {
          h.retain();
          host.add(h);
        } else {
          host.add(((DeviceTable) t).toHost(ctx.exec().allocator()));
        }
      }
      try (HostTable result = op.apply(host)) {
        if (!(inputs.get(0) instanceof DeviceTable)) {
          result.retain();
          return result;
        }
        try (VectorSchemaRoot root = result.toArrow(ctx.exec().allocator());
            CudaStream stream = ctx.exec().gpu().newStream()) {
          return DeviceTable.fromArrow(ctx.exec().gpu(), root, stream);
        }
      }
    } finally {
      host.forEach(Table::close);
    }
  }

  /** Runs every input of {@code rel}, then {@link #viaHost} over them; the caller closes the result. */
  static Table<?> inputsViaHost(QueryContext ctx, GpuRel rel, java.util.function.Function<List<HostTable>, HostTable> op) {
    List<Table<?>> inputs = new ArrayList<>();
    try {
      for (int i = 0; i < rel.getInputs().size(); i++) {
        inputs.add(rel.input(ctx, i));
      }
      return viaHost(ctx, inputs, op);
    } finally {
      inputs.forEach(Table::close);
    }
  }
}
