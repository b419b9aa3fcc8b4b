package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.Table;
import java.util.List;

/**
 * One-column forms of the table operations, each on its column's backend (the GPU for a {@link
 * DeviceColumn}, the CPU twin for a {@link HostColumn}), for operations built out of them
 * ({@link DictionaryEval}, {@link RankedExtremes}). Arguments are borrowed; the caller owns what
 * comes back.
 */
final class ColumnOps {
  private ColumnOps() {}

  /** A one-column table sharing {@code c}: it retains {@code c}, and closing it releases that. */
  static Table<?> table(Exec exec, Column c) {
    return table(exec, c instanceof DeviceColumn, List.of("c"), List.of(kept(c)), c.rowCount());
  }

  /** A table on the GPU ({@code onDevice}) or the host that takes ownership of {@code columns}. */
  static Table<?> table(Exec exec, boolean onDevice, List<String> names, List<? extends Column> columns, int rows) {
    if (onDevice) {
      return new DeviceTable(exec.gpu(), names, columns.stream().map(c -> (DeviceColumn) c).toList(), rows);
    }
    return new HostTable(names, columns.stream().map(c -> (HostColumn) c).toList(), rows);
  }

  /** {@code values[map[row]]}. */
  static Column gather(Exec exec, Column values, Column map) {
    try (Table<?> t = table(exec, values); Table<?> g = t instanceof DeviceTable d ? Gather.gather(exec, d, (DeviceColumn) map)
        : Gather.gather(exec, (HostTable) t, (HostColumn) map)) {
      return kept(g.column(0));
    }
  }

  /** {@code a} then {@code b}. */
  static Column concat(Exec exec, Column a, Column b) {
    try (Table<?> ta = table(exec, a); Table<?> tb = table(exec, b);
        Table<?> both = ta instanceof DeviceTable d ? Concat.concat(exec, d, (DeviceTable) tb)
            : Concat.concat(exec, (HostTable) ta, (HostTable) tb)) {
      return kept(both.column(0));
    }
  }

  /** The stable permutation that sorts {@code c} by {@code key} (whose column is 0), as INT32. */
  static Column argsort(Exec exec, Column c, SortKey key) {
    try (Table<?> t = table(exec, c)) {
      return t instanceof DeviceTable d ? Sort.argsort(exec, d, List.of(key)) : Sort.argsort(exec, (HostTable) t, List.of(key));
    }
  }

  /** Rows {@code [offset, offset + length)} of {@code c}. */
  static Column slice(Exec exec, Column c, int offset, int length) {
    try (Table<?> t = table(exec, c); Table<?> s = t instanceof DeviceTable d ? Slice.slice(exec, d, offset, length)
        : Slice.slice(exec, (HostTable) t, offset, length)) {
      return kept(s.column(0));
    }
  }

  /** {@code c}, retained for the caller. */
  static <C extends Column> C kept(C c) {
    c.retain();
    return c;
  }
}
