package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.HostTable;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * Batches into gpudf: one of Arrow columns (another gpudf operator's) moves into the taking task's
 * allocator with no copy, one of Spark's own columns is copied; either way the values, NULLs and
 * non-ASCII strings arrive, and nothing stays counted where it came from.
 */
class SparkArrowTest {
  private static final StructType SCHEMA = new StructType().add("k", DataTypes.IntegerType).add("s", DataTypes.StringType);

  @Test
  void arrowColumnsMoveAndSparkColumnsAreCopied() {
    try (RootAllocator root = new RootAllocator(); BufferAllocator upstream = root.newChildAllocator("up", 0, Long.MAX_VALUE);
        BufferAllocator mine = root.newChildAllocator("mine", 0, Long.MAX_VALUE)) {
      IntVector k = new IntVector("k", upstream);
      VarCharVector s = new VarCharVector("s", upstream);
      k.allocateNew(3);
      s.allocateNew();
      k.set(0, 7);
      k.setNull(1);
      k.set(2, -1);
      s.setSafe(0, "Zürich".getBytes(StandardCharsets.UTF_8));
      s.setSafe(1, "".getBytes(StandardCharsets.UTF_8));
      s.setNull(2);
      k.setValueCount(3);
      s.setValueCount(3);
      ColumnarBatch arrow = new ColumnarBatch(new ColumnVector[] {new ArrowColumnVector(k), new ArrowColumnVector(s)}, 3);
      try (HostTable t = SparkArrow.toGpudf(arrow, SCHEMA, mine)) {
        check(t);
        assertTrue(mine.getAllocatedMemory() > 0);
        arrow.close();
        assertEquals(0, upstream.getAllocatedMemory(), "the buffers moved to the taking allocator");
        // the table back out to Spark, and in again through Spark's own row copy
        try (SparkArrow.Output out = SparkArrow.toSpark(t, mine)) {
          ColumnarBatch copied = new ColumnarBatch(new ColumnVector[] {copy(out.batch().column(0), 3, true),
              copy(out.batch().column(1), 3, false)}, 3);
          try (HostTable again = SparkArrow.toGpudf(copied, SCHEMA, mine)) {
            check(again);
          }
        }
      }
      assertEquals(0, mine.getAllocatedMemory());
    }
  }

  private static void check(HostTable t) {
    assertEquals(3, t.rowCount());
    try (VectorSchemaRoot r = t.toArrow(t.column(0).vector().getAllocator())) {
      assertEquals(7, r.getVector(0).getObject(0));
      assertEquals(null, r.getVector(0).getObject(1));
      assertEquals(-1, r.getVector(0).getObject(2));
      assertEquals("Zürich", r.getVector(1).getObject(0).toString());
      assertEquals("", r.getVector(1).getObject(1).toString());
      assertEquals(null, r.getVector(1).getObject(2));
    }
  }

  /** A Spark on-heap column holding {@code source}'s {@code rows} values (not Arrow: the copying path). */
  private static ColumnVector copy(ColumnVector source, int rows, boolean ints) {
    org.apache.spark.sql.execution.vectorized.OnHeapColumnVector v = new org.apache.spark.sql.execution.vectorized
        .OnHeapColumnVector(rows, ints ? DataTypes.IntegerType : DataTypes.StringType);
    for (int i = 0; i < rows; i++) {
      if (source.isNullAt(i)) {
        v.putNull(i);
      } else if (ints) {
        v.putInt(i, source.getInt(i));
      } else {
        byte[] b = source.getUTF8String(i).getBytes();
        v.putByteArray(i, b);
      }
    }
    return v;
  }
}
