package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.Table;
import java.util.ArrayList;
import java.util.List;

/**
 * The columns an expression reads, by index: a table's, then any that {@link StringBuild}
 * computed ahead of it. Borrowed: whoever made the columns closes them.
 */
record EvalInput(List<? extends Column> columns, int rows, boolean onDevice) {
  static EvalInput of(Table<?> t) {
    List<Column> cols = new ArrayList<>(t.columnCount());
    for (int i = 0; i < t.columnCount(); i++) {
      cols.add(t.column(i));
    }
    return new EvalInput(cols, t.rowCount(), t instanceof DeviceTable);
  }

  /** These columns and then {@code more}. */
  EvalInput plus(List<? extends Column> more) {
    List<Column> cols = new ArrayList<>(columns);
    cols.addAll(more);
    return new EvalInput(cols, rows, onDevice);
  }

  List<DataType> types() {
    return columns.stream().map(Column::type).toList();
  }

  int width() {
    return columns.size();
  }
}
