package dev.gpudf.columnar;

import org.apache.arrow.vector.FieldVector;

/**
 * A column in host memory: an Arrow vector that this column owns (its buffers may be shared,
 * by reference count, with the vector it was made from). The CPU backend reads it through
 * {@link #vector()}; the last close closes the vector.
 */
public final class HostColumn extends Column {
  private final FieldVector vector;

  /** Takes ownership of {@code vector}, whose field type must be one {@link ArrowTypes} accepts. */
  public HostColumn(FieldVector vector) {
    this(vector, HostBitmaps.nullCount(vector));
  }

  /** As {@link #HostColumn(FieldVector)}, with the null count already known. */
  HostColumn(FieldVector vector, int nullCount) {
    super(ArrowTypes.fromArrow(vector.getField()), vector.getValueCount(), nullCount);
    this.vector = vector;
  }

  /** The Arrow vector; still owned by this column, so callers must not close it. */
  public FieldVector vector() {
    checkOpen();
    return vector;
  }

  @Override
  protected void release() {
    vector.close();
  }
}
