package dev.gpudf.spark;

import dev.gpudf.columnar.HostTable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Batches between Spark and gpudf, as Arrow. */
final class SparkArrow {
  private SparkArrow() {}

  /** A batch handed to Spark and the Arrow columns under it; closing frees both. */
  record Output(VectorSchemaRoot root, ColumnarBatch batch) implements GpudfExec.HeldBatch {
    @Override
    public void close() {
      batch.close();
      root.close();
    }
  }

  /**
   * {@code batch}'s rows (of {@code schema}) as a gpudf table in {@code allocator}, which the caller
   * closes. Columns are named by position: Spark's names may repeat (a join's two sides), gpudf's
   * operators address columns by position anyway.
   */
  static HostTable toGpudf(ColumnarBatch batch, StructType schema, BufferAllocator allocator) {
    HostTable moved = taken(batch, allocator);
    if (moved != null) {
      return moved;
    }
    HostTable copied = copied(batch, schema, allocator);
    if (copied != null) {
      return copied;
    }
    return rowByRow(batch, schema, allocator);
  }

  /** {@link #toGpudf} by Spark's own writer, row by row: for column types {@link #copied} does not copy. */
  static HostTable rowByRow(ColumnarBatch batch, StructType schema, BufferAllocator allocator) {
    return rows(batch.rowIterator(), schema, allocator);
  }

  /** Spark's rows of {@code schema} as a gpudf table, by Spark's own Arrow writer (each row written as it comes: rows may be reused). */
  static HostTable rows(Iterator<InternalRow> rows, StructType schema, BufferAllocator allocator) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrow(schema), allocator)) {
      ArrowWriter writer = ArrowWriter.create(root);
      while (rows.hasNext()) {
        writer.write(rows.next());
      }
      writer.finish();
      return HostTable.fromArrow(root);
    }
  }

  /**
   * {@code batch} (Spark's own vectors, from its Parquet reader say) copied column by column into
   * Arrow vectors, each column one typed loop with no row objects; null when a column is of a type
   * this does not copy (then {@link #rowByRow} does).
   */
  private static HostTable copied(ColumnarBatch batch, StructType schema, BufferAllocator allocator) {
    int rows = batch.numRows();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrow(schema), allocator)) {
      for (int c = 0; c < batch.numCols(); c++) {
        if (!copy(batch.column(c), root.getVector(c), rows)) {
          return null;
        }
      }
      root.setRowCount(rows);
      return HostTable.fromArrow(root);
    }
  }

  /** Rows {@code 0 .. rows - 1} of {@code in} into {@code out}; false (nothing written that matters) for a type not copied here. */
  private static boolean copy(ColumnVector in, FieldVector out, int rows) {
    if (out instanceof IntVector v) {
      v.allocateNew(rows);
      fill(in, rows, v::setNull, i -> v.set(i, in.getInt(i)));
    } else if (out instanceof DateDayVector v) {
      v.allocateNew(rows);
      fill(in, rows, v::setNull, i -> v.set(i, in.getInt(i)));
    } else if (out instanceof BigIntVector v) {
      v.allocateNew(rows);
      fill(in, rows, v::setNull, i -> v.set(i, in.getLong(i)));
    } else if (out instanceof Float8Vector v) {
      v.allocateNew(rows);
      fill(in, rows, v::setNull, i -> v.set(i, in.getDouble(i)));
    } else if (out instanceof BitVector v) {
      v.allocateNew(rows);
      fill(in, rows, v::setNull, i -> v.set(i, in.getBoolean(i) ? 1 : 0));
    } else if (out instanceof DecimalVector v) {
      int precision = v.getPrecision();
      int scale = v.getScale();
      v.allocateNew(rows);
      if (in instanceof WritableColumnVector && precision <= Decimal.MAX_LONG_DIGITS()) {
        // Spark's own vectors (its Parquet reader's) keep up to 9 digits as an unscaled int and up to
        // 18 as an unscaled long, at the column's scale: read as such, with no Decimal a value
        fill(in, rows, v::setNull, precision <= Decimal.MAX_INT_DIGITS() ? i -> v.set(i, in.getInt(i))
            : i -> v.set(i, in.getLong(i)));
      } else {
        fill(in, rows, v::setNull, precision <= Decimal.MAX_LONG_DIGITS()
            ? i -> v.set(i, in.getDecimal(i, precision, scale).toUnscaledLong())
            : i -> v.set(i, in.getDecimal(i, precision, scale).toJavaBigDecimal()));
      }
    } else if (out instanceof VarCharVector v) {
      v.allocateNew(rows);
      fill(in, rows, v::setNull, i -> {
        UTF8String u = in.getUTF8String(i);
        if (u.getBaseObject() instanceof byte[] b) {
          // the bytes where Spark keeps them, with no copy of their own
          v.setSafe(i, b, (int) (u.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), u.numBytes());
        } else {
          v.setSafe(i, u.getBytes());
        }
      });
    } else {
      return false;
    }
    out.setValueCount(rows);
    return true;
  }

  /** For each of rows {@code 0 .. rows - 1}: {@code setNull} where {@code in} is NULL, else {@code set}. */
  private static void fill(ColumnVector in, int rows, java.util.function.IntConsumer setNull, java.util.function.IntConsumer set) {
    if (!in.hasNull()) {
      for (int i = 0; i < rows; i++) {
        set.accept(i);
      }
      return;
    }
    for (int i = 0; i < rows; i++) {
      if (in.isNullAt(i)) {
        setNull.accept(i);
      } else {
        set.accept(i);
      }
    }
  }

  /** A table of no rows with {@code schema}'s columns, in {@code allocator}; the caller closes it. */
  static HostTable empty(StructType schema, BufferAllocator allocator) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(arrow(schema), allocator)) {
      root.setRowCount(0);
      return HostTable.fromArrow(root);
    }
  }

  /** {@code schema} in Arrow, its columns named by position. */
  private static Schema arrow(StructType schema) {
    StructField[] fields = new StructField[schema.fields().length];
    for (int i = 0; i < fields.length; i++) {
      StructField f = schema.fields()[i];
      fields[i] = new StructField("c" + i, f.dataType(), f.nullable(), Metadata.empty());
    }
    // the time zone is for timestamps, which no gpudf operator takes yet
    return ArrowUtils.toArrowSchema(new StructType(fields), "UTC", true, false);
  }

  /**
   * {@code batch} as a gpudf table in {@code allocator} with no copy, when its columns are Arrow
   * vectors (another gpudf operator's output): their buffers move to {@code allocator} (the batch is
   * this operator's to consume, and its producer makes a new one for the next), so that nothing the
   * table holds is counted to another task's allocator. Null when a column is not Arrow.
   */
  private static HostTable taken(ColumnarBatch batch, BufferAllocator allocator) {
    List<FieldVector> vectors = new ArrayList<>();
    for (int i = 0; i < batch.numCols(); i++) {
      if (!(batch.column(i) instanceof ArrowColumnVector a) || !(a.getValueVector() instanceof FieldVector v)) {
        return null;
      }
      vectors.add(v);
    }
    List<FieldVector> moved = new ArrayList<>();
    for (int i = 0; i < vectors.size(); i++) {
      FieldVector v = vectors.get(i);
      Field named = new Field("c" + i, v.getField().getFieldType(), v.getField().getChildren());
      FieldVector target = (FieldVector) named.createVector(allocator);
      v.makeTransferPair(target).transfer();
      moved.add(target);
    }
    try (VectorSchemaRoot root = new VectorSchemaRoot(moved)) {
      root.setRowCount(batch.numRows());
      return HostTable.fromArrow(root);
    }
  }

  /** {@code table} (which the caller still closes) as a Spark batch of Arrow columns in {@code allocator}. */
  static Output toSpark(HostTable table, BufferAllocator allocator) {
    VectorSchemaRoot root = table.toArrow(allocator);
    ColumnVector[] columns = new ColumnVector[root.getFieldVectors().size()];
    int i = 0;
    for (FieldVector v : root.getFieldVectors()) {
      columns[i++] = new ArrowColumnVector(v);
    }
    return new Output(root, new ColumnarBatch(columns, root.getRowCount()));
  }
}
