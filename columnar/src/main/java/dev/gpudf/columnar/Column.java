package dev.gpudf.columnar;

/**
 * One typed column of a {@link Table}, on the host ({@link HostColumn}) or the device
 * ({@link DeviceColumn}). Reference counted: whoever creates or retains a column closes it.
 */
public abstract sealed class Column extends RefCounted permits HostColumn, DeviceColumn {
  private final DataType type;
  private final int rowCount;
  private final int nullCount;

  protected Column(DataType type, int rowCount, int nullCount) {
    if (rowCount < 0 || nullCount < 0 || nullCount > rowCount) {
      throw new IllegalArgumentException("bad row/null count " + rowCount + "/" + nullCount);
    }
    this.type = type;
    this.rowCount = rowCount;
    this.nullCount = nullCount;
  }

  public DataType type() {
    return type;
  }

  public int rowCount() {
    return rowCount;
  }

  public int nullCount() {
    return nullCount;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + type + ", " + rowCount + " rows, " + nullCount + " null]";
  }
}
