package dev.gpudf.columnar;

import org.apache.arrow.vector.FieldVector;

/**
 * A column in host memory: an Arrow vector that this column owns (its buffers may be shared,
 * by reference count, with the vector it was made from). The CPU backend reads it through
 * {@link #vector()}; the last close closes the vector. A string column may instead be held as a
 * dictionary and codes ({@link #encoded}), its vector made only when first read.
 */
public final class HostColumn extends Column {
  // null until first read where the column is encoded
  private volatile FieldVector vector;
  // an encoded column's codes, and what its vector is made of and from (else all null)
  private final StringCodes codes;
  private final org.apache.arrow.vector.types.pojo.Field field;
  private final org.apache.arrow.memory.BufferAllocator allocator;

  /** Takes ownership of {@code vector}, whose field type must be one {@link ArrowTypes} accepts. */
  public HostColumn(FieldVector vector) {
    this(vector, HostBitmaps.nullCount(vector));
  }

  /** As {@link #HostColumn(FieldVector)}, with the null count already known. */
  HostColumn(FieldVector vector, int nullCount) {
    super(ArrowTypes.fromArrow(vector.getField()), vector.getValueCount(), nullCount);
    this.vector = vector;
    this.codes = null;
    this.field = null;
    this.allocator = null;
  }

  private HostColumn(StringCodes codes, org.apache.arrow.vector.types.pojo.Field field,
      org.apache.arrow.memory.BufferAllocator allocator) {
    super(ArrowTypes.fromArrow(field), codes.rows(), codes.nulls());
    if (ArrowTypes.fromArrow(field).id() != TypeId.STRING) {
      throw new dev.gpudf.columnar.error.InternalException("codes of strings for a column of " + field.getType());
    }
    this.codes = codes;
    this.field = field;
    this.allocator = allocator;
  }

  /**
   * A string column of {@code field} held as {@code codes}, which it takes (and closes with
   * itself): filters and groupings that can read {@link #codes()} do, and its vector is made from
   * {@code allocator} (which must outlive it) when something first reads {@link #vector()}.
   */
  public static HostColumn encoded(StringCodes codes, org.apache.arrow.vector.types.pojo.Field field,
      org.apache.arrow.memory.BufferAllocator allocator) {
    return new HostColumn(codes, field, allocator);
  }

  /**
   * The Arrow vector; still owned by this column, so callers must not close it. An encoded
   * column's is made now where no one has read it before.
   */
  public FieldVector vector() {
    checkOpen();
    FieldVector v = vector;
    if (v == null) {
      synchronized (this) {
        checkOpen();
        v = vector;
        if (v == null) {
          v = codes.vector(allocator, field);
          vector = v;
        }
      }
    }
    return v;
  }

  /**
   * This column as one that holds its vector: itself, retained, unless it is {@link #encoded},
   * else a new column owning a vector made now. The caller closes the result.
   */
  public HostColumn decoded() {
    checkOpen();
    if (codes == null) {
      retain();
      return this;
    }
    return new HostColumn(codes.vector(allocator, field));
  }

  /** The codes of a column made {@link #encoded}, else null: equal codes are equal strings; the column owns them. */
  public StringCodes codes() {
    checkOpen();
    return codes;
  }

  @Override
  protected void release() {
    FieldVector v;
    synchronized (this) {
      v = vector;
      vector = null;
    }
    if (v != null) {
      v.close();
    }
    if (codes != null) {
      codes.close();
    }
  }
}
