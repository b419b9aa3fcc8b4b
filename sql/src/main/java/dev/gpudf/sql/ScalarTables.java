package dev.gpudf.sql;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.kernels.Scalar;
import java.math.BigDecimal;
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
import org.apache.arrow.vector.VectorSchemaRoot;

/** One-row Arrow tables of scalars: how global aggregates become a result table. */
final class ScalarTables {
  private ScalarTables() {}

  /** A one-row root with a column per scalar; the caller closes it. */
  static VectorSchemaRoot of(BufferAllocator allocator, List<String> names, List<Scalar> values) {
    List<FieldVector> vectors = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      Scalar s = values.get(i);
      FieldVector v = ArrowTypes.toArrowField(names.get(i), s.type()).createVector(allocator);
      vectors.add(v);
      v.setInitialCapacity(1);
      v.allocateNew();
      if (s.isNull()) {
        v.setNull(0);
      } else {
        set(v, s.type(), s.value());
      }
      v.setValueCount(1);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(1);
    return root;
  }

  private static void set(FieldVector v, DataType t, Object value) {
    switch (t.id()) {
      case BOOL -> ((BitVector) v).set(0, (Boolean) value ? 1 : 0);
      case INT8 -> ((TinyIntVector) v).set(0, ((Number) value).byteValue());
      case INT16 -> ((SmallIntVector) v).set(0, ((Number) value).shortValue());
      case INT32 -> ((IntVector) v).set(0, ((Number) value).intValue());
      case INT64 -> ((BigIntVector) v).set(0, ((Number) value).longValue());
      case FLOAT32 -> ((Float4Vector) v).set(0, ((Number) value).floatValue());
      case FLOAT64 -> ((Float8Vector) v).set(0, ((Number) value).doubleValue());
      case DECIMAL -> ((DecimalVector) v).set(0, ((BigDecimal) value).setScale(t.scale()));
      case DATE -> ((DateDayVector) v).set(0, ((Number) value).intValue());
      case TIMESTAMP -> ((TimeStampVector) v).set(0, ((Number) value).longValue());
      case STRING -> throw new InternalException("string scalars are not produced by any aggregate yet");
    }
  }
}
