package dev.gpudf.columnar;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Deterministic tables for throughput checks ({@code gpudf info}, the transfer benchmark). */
public final class SampleData {
  private SampleData() {}

  /**
   * {@code rows} rows of an INT64 {@code id} (a multiplicative hash of the row number) and a
   * FLOAT64 {@code value} (row / 4), no nulls: 16 bytes a row. The caller closes the root.
   */
  public static VectorSchemaRoot idValue(BufferAllocator allocator, int rows) {
    BigIntVector ids = new BigIntVector("id", allocator);
    Float8Vector values = new Float8Vector("value", allocator);
    ids.allocateNew(rows);
    values.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      ids.set(i, i * 2654435761L);
      values.set(i, i * 0.25);
    }
    ids.setValueCount(rows);
    values.setValueCount(rows);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(ids, values));
    root.setRowCount(rows);
    return root;
  }
}
