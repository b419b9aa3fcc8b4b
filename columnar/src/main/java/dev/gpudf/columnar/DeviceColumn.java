package dev.gpudf.columnar;

import dev.gpudf.columnar.cuda.DeviceBuffer;

/**
 * A column in device memory, in Arrow's layout: {@code data} (values; the bitmap for BOOL; the
 * UTF-8 bytes for STRING, exactly as many as the last offset), {@code offsets} (STRING only,
 * rowCount + 1 int32 starting at 0) and {@code validity} (LSB-first bitmap, 1 = valid; null when
 * the column has no nulls). The column owns the buffers and closes them on its last close.
 */
public final class DeviceColumn extends Column {
  private final DeviceBuffer data;
  private final DeviceBuffer offsets;
  private final DeviceBuffer validity;

  /** Takes ownership of the buffers; {@code offsets} only for STRING, {@code validity} may be null. */
  public DeviceColumn(DataType type, int rowCount, int nullCount, DeviceBuffer data, DeviceBuffer offsets,
      DeviceBuffer validity) {
    super(type, rowCount, nullCount);
    if ((type.id() == TypeId.STRING) != (offsets != null)) {
      throw new IllegalArgumentException("offsets are required for STRING columns and only there");
    }
    if (nullCount > 0 && validity == null) {
      throw new IllegalArgumentException("a column with nulls needs a validity bitmap");
    }
    this.data = data;
    this.offsets = offsets;
    this.validity = validity;
  }

  public DeviceBuffer data() {
    checkOpen();
    return data;
  }

  /** The offsets, or null unless STRING. */
  public DeviceBuffer offsets() {
    checkOpen();
    return offsets;
  }

  /** The validity bitmap, or null when every row is valid. */
  public DeviceBuffer validity() {
    checkOpen();
    return validity;
  }

  /** Bytes of a validity (or BOOL data) bitmap for {@code rows} rows. */
  public static long bitmapBytes(long rows) {
    return (rows + 7) / 8;
  }

  @Override
  protected void release() {
    data.close();
    if (offsets != null) {
      offsets.close();
    }
    if (validity != null) {
      validity.close();
    }
  }
}
