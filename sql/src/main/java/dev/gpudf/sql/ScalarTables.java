package dev.gpudf.sql;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.kernels.Scalar;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Arrow tables of scalars: how global aggregates and VALUES become result tables. */
final class ScalarTables {
  private ScalarTables() {}

  /** A one-row root with a column per scalar; the caller closes it. */
  static VectorSchemaRoot of(BufferAllocator allocator, List<String> names, List<Scalar> values) {
    return rows(allocator, names, values.stream().map(Scalar::type).toList(), List.of(values));
  }

  /**
   * A root with columns {@code names} of {@code types} and one row per element of {@code rows}
   * (each value converted to its column's type); the caller closes it.
   */
  static VectorSchemaRoot rows(BufferAllocator allocator, List<String> names, List<DataType> types,
      List<List<Scalar>> rows) {
    List<FieldVector> vectors = new ArrayList<>();
    try {
      for (int c = 0; c < types.size(); c++) {
        final int col = c;
        vectors.add(column(allocator, names.get(c), types.get(c),
            rows.stream().map(r -> r.get(col).isNull() ? null : r.get(col).value()).toList()));
      }
    } catch (RuntimeException e) {
      vectors.forEach(FieldVector::close);
      throw e;
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(rows.size());
    return root;
  }

  /**
   * A vector named {@code name} of {@code type} holding {@code values} (null elements are nulls;
   * numbers in any boxed type, a DATE as its day number); the caller closes it.
   */
  static FieldVector column(BufferAllocator allocator, String name, DataType type, List<?> values) {
    FieldVector v = ArrowTypes.toArrowField(name, type).createVector(allocator);
    try {
      v.setInitialCapacity(values.size());
      v.allocateNew();
      for (int r = 0; r < values.size(); r++) {
        if (values.get(r) == null) {
          v.setNull(r);
        } else {
          set(v, r, type, values.get(r));
        }
      }
      v.setValueCount(values.size());
      return v;
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }

  private static void set(FieldVector v, int i, DataType t, Object value) {
    switch (t.id()) {
      case BOOL -> ((BitVector) v).set(i, (Boolean) value ? 1 : 0);
      case INT8 -> ((TinyIntVector) v).set(i, ((Number) value).byteValue());
      case INT16 -> ((SmallIntVector) v).set(i, ((Number) value).shortValue());
      case INT32 -> ((IntVector) v).set(i, ((Number) value).intValue());
      case INT64 -> ((BigIntVector) v).set(i, ((Number) value).longValue());
      case FLOAT32 -> ((Float4Vector) v).set(i, ((Number) value).floatValue());
      case FLOAT64 -> ((Float8Vector) v).set(i, ((Number) value).doubleValue());
      // a narrower literal (1 in a DECIMAL(3, 1) column) widens exactly; the planner typed the column to hold it
      case DECIMAL -> ((DecimalVector) v).setSafe(i, new BigDecimal(value.toString()).setScale(t.scale()));
      case DATE -> ((DateDayVector) v).set(i, ((Number) value).intValue());
      case TIMESTAMP -> ((TimeStampVector) v).set(i, ((Number) value).longValue());
      case STRING -> ((VarCharVector) v).setSafe(i, ((String) value).getBytes(StandardCharsets.UTF_8));
    }
  }
}
