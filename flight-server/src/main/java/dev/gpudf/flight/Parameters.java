package dev.gpudf.flight;

import dev.gpudf.columnar.ArrowDictionaries;
import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.error.UserException;
import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.calcite.util.DateString;
import org.apache.calcite.util.TimestampString;

/**
 * The values a client binds to a prepared statement's {@code ?} markers: rows of a DoPut
 * stream, converted to the Java values the planner makes literals of (numbers as BigDecimal,
 * strings, booleans, Calcite's DateString and TimestampString).
 */
final class Parameters {
  private Parameters() {}

  /** The bound row (empty when the stream has no rows); more than one row or the wrong columns is a user error. */
  static List<Object> read(FlightStream stream, Schema expected) {
    List<List<Object>> rows = readRows(stream, expected);
    if (rows.size() > 1) {
      throw new UserException("a prepared query binds one row of parameters at a time, not " + rows.size());
    }
    return rows.isEmpty() ? List.of() : rows.get(0);
  }

  /** Every bound row (a JDBC batch binds many); the wrong columns is a user error. */
  static List<List<Object>> readRows(FlightStream stream, Schema expected) {
    List<List<Object>> rows = new ArrayList<>();
    eachBatch(stream, expected, root -> {
      for (int r = 0; r < root.getRowCount(); r++) {
        List<Object> row = new ArrayList<>();
        for (FieldVector v : root.getFieldVectors()) {
          row.add(value(v, r));
        }
        rows.add(row);
      }
    });
    return rows;
  }

  /**
   * Every bound row as one table from {@code allocator}, for a statement that takes them all at
   * once; no rows or the wrong columns is a user error. The caller closes it.
   */
  static VectorSchemaRoot readTable(FlightStream stream, Schema expected, BufferAllocator allocator) {
    VectorSchemaRoot all = InboundBatches.gather(stream, allocator, "bound parameters");
    // no rows first: a client that binds nothing may send no schema either
    if (all.getRowCount() == 0) {
      all.close();
      throw noneBound(expected);
    }
    if (all.getFieldVectors().size() != expected.getFields().size()) {
      all.close();
      throw new UserException("the statement has " + expected.getFields().size() + " parameters, "
          + all.getFieldVectors().size() + " were bound");
    }
    return all;
  }

  /** The error for a statement with markers and no rows bound to them. */
  static UserException noneBound(Schema expected) {
    return new UserException("the statement has " + expected.getFields().size() + " parameters and none were bound");
  }

  /**
   * Hands each non-empty batch of {@code stream} to {@code use}, checked, its dictionary-encoded
   * columns decoded (a parameter binds its value, not its code); a batch of the wrong width is a
   * user error.
   */
  private static void eachBatch(FlightStream stream, Schema expected, java.util.function.Consumer<VectorSchemaRoot> use) {
    for (long b = 1; stream.next(); b++) {
      VectorSchemaRoot root = stream.getRoot();
      if (root.getRowCount() == 0) {
        continue;
      }
      ArrowInput.check(root, stream.getDictionaryProvider(), "bound parameters, batch " + b);
      if (root.getFieldVectors().size() != expected.getFields().size()) {
        throw new UserException("the statement has " + expected.getFields().size() + " parameters, "
            + root.getFieldVectors().size() + " were bound");
      }
      if (!ArrowDictionaries.encoded(root.getSchema())) {
        use.accept(root);
        continue;
      }
      try (VectorSchemaRoot decoded = ArrowDictionaries.decode(root, stream.getDictionaryProvider(),
          root.getFieldVectors().get(0).getAllocator())) {
        use.accept(decoded);
      }
    }
  }

  private static Object value(FieldVector v, int row) {
    if (v.isNull(row)) {
      return null;
    }
    if (v instanceof DateDayVector d) {
      return DateString.fromDaysSinceEpoch(d.get(row));
    }
    Object o = v.getObject(row);
    if (o instanceof LocalDateTime t) {
      return new TimestampString(t.getYear(), t.getMonthValue(), t.getDayOfMonth(), t.getHour(), t.getMinute(),
          t.getSecond()).withNanos(t.getNano());
    }
    if (o instanceof Byte || o instanceof Short || o instanceof Integer || o instanceof Long) {
      return BigDecimal.valueOf(((Number) o).longValue());
    }
    if ((o instanceof Double || o instanceof Float) && Double.isFinite(((Number) o).doubleValue())) {
      return new BigDecimal(o.toString());
    }
    if (o instanceof org.apache.arrow.vector.util.Text text) {
      return text.toString();
    }
    return o;
  }
}
