package dev.gpudf.columnar;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Named, typed columns of equal length, on the host ({@link HostTable}, the CPU backend) or the
 * device ({@link DeviceTable}, the GPU backend). A table owns its columns: the last close closes
 * them. Operators take tables and return new tables that the caller owns.
 *
 * @param <C> the column kind
 */
public abstract sealed class Table<C extends Column> extends RefCounted permits HostTable, DeviceTable {
  private final List<String> names;
  private final List<C> columns;
  private final int rowCount;

  /** Takes ownership of {@code columns}; all must have {@code rowCount} rows. */
  protected Table(List<String> names, List<C> columns, int rowCount) {
    if (names.size() != columns.size()) {
      throw new UserException(names.size() + " names for " + columns.size() + " columns");
    }
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).rowCount() != rowCount) {
        throw new UserException("column '" + names.get(i) + "' has " + columns.get(i).rowCount()
            + " rows, the table " + rowCount);
      }
    }
    this.names = List.copyOf(names);
    this.columns = List.copyOf(columns);
    this.rowCount = rowCount;
  }

  public int rowCount() {
    return rowCount;
  }

  public int columnCount() {
    return columns.size();
  }

  public List<String> names() {
    return names;
  }

  /** Column {@code i}; still owned by the table (retain it to keep it past the table). */
  public C column(int i) {
    checkOpen();
    return columns.get(i);
  }

  /** The column named {@code name}; throws {@link UserException} if absent or ambiguous. */
  public C column(String name) {
    int found = -1;
    for (int i = 0; i < names.size(); i++) {
      if (names.get(i).equals(name)) {
        if (found >= 0) {
          throw new UserException("column name '" + name + "' is ambiguous in " + names);
        }
        found = i;
      }
    }
    if (found < 0) {
      throw new UserException("no column '" + name + "' in " + names);
    }
    return column(found);
  }

  /** Column types in order. */
  public List<DataType> types() {
    List<DataType> t = new ArrayList<>();
    for (C c : columns) {
      t.add(c.type());
    }
    return t;
  }

  /**
   * The table as Arrow vectors; the caller closes the root. Device tables copy into buffers from
   * {@code allocator}; host tables share their buffers (accounted to their own allocator).
   */
  public abstract VectorSchemaRoot toArrow(BufferAllocator allocator);

  protected List<C> columns() {
    return columns;
  }

  @Override
  protected void release() {
    for (C c : columns) {
      c.close();
    }
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(getClass().getSimpleName()).append('[').append(rowCount).append(" rows");
    for (int i = 0; i < names.size(); i++) {
      sb.append(", ").append(names.get(i)).append(' ').append(columns.get(i).type());
    }
    return sb.append(']').toString();
  }
}
