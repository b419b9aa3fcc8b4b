package dev.gpudf.sql.jdbc;

import dev.gpudf.columnar.error.NotSupportedException;
import java.nio.charset.StandardCharsets;
import java.sql.DatabaseMetaData;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FloatingPointVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.calcite.avatica.ColumnMetaData;
import org.apache.calcite.avatica.ColumnMetaData.Rep;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * Arrow results as Avatica rows: column metadata from the plan's SQL types, and each row as an
 * {@code Object[]} in the representation Avatica's accessors expect for that type (a DATE is its
 * day number, a TIMESTAMP its epoch milliseconds).
 */
final class ArrowRows {
  private ArrowRows() {}

  /** JDBC column metadata for the columns of {@code type}. */
  static List<ColumnMetaData> columns(RelDataType type) {
    List<ColumnMetaData> out = new ArrayList<>();
    for (RelDataTypeField f : type.getFieldList()) {
      RelDataType t = f.getType();
      SqlTypeName name = t.getSqlTypeName();
      int precision = t.getPrecision() == RelDataType.PRECISION_NOT_SPECIFIED ? 0 : t.getPrecision();
      int scale = t.getScale() == RelDataType.SCALE_NOT_SPECIFIED ? 0 : t.getScale();
      ColumnMetaData.ScalarType scalar = ColumnMetaData.scalar(name.getJdbcOrdinal(), name.getName(), rep(name));
      out.add(new ColumnMetaData(f.getIndex(), false, true, true, false,
          t.isNullable() ? DatabaseMetaData.columnNullable : DatabaseMetaData.columnNoNulls,
          SqlTypeName.NUMERIC_TYPES.contains(name), Math.max(precision, 1), f.getName(), f.getName(), null,
          precision, scale, null, null, scalar, true, false, false, scalar.columnClassName()));
    }
    return out;
  }

  private static Rep rep(SqlTypeName name) {
    return switch (name) {
      case BOOLEAN -> Rep.BOOLEAN;
      case TINYINT -> Rep.BYTE;
      case SMALLINT -> Rep.SHORT;
      case INTEGER, DATE -> Rep.INTEGER;
      case BIGINT, TIMESTAMP -> Rep.LONG;
      case REAL -> Rep.FLOAT;
      case FLOAT, DOUBLE -> Rep.DOUBLE;
      case DECIMAL -> Rep.NUMBER;
      case CHAR, VARCHAR -> Rep.STRING;
      default -> throw new NotSupportedException("JDBC results of type " + name + " are not supported");
    };
  }

  /** The first {@code maxRows} rows (all when it is not positive) of {@code root}, typed as {@code type} says. */
  static List<Object> rows(VectorSchemaRoot root, RelDataType type, long maxRows) {
    int n = maxRows > 0 ? (int) Math.min(maxRows, root.getRowCount()) : root.getRowCount();
    List<FieldVector> vectors = root.getFieldVectors();
    List<RelDataTypeField> fields = type.getFieldList();
    List<Object> rows = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Object[] row = new Object[vectors.size()];
      for (int c = 0; c < row.length; c++) {
        row[c] = value(vectors.get(c), i, fields.get(c).getType().getSqlTypeName());
      }
      rows.add(row);
    }
    return rows;
  }

  private static Object value(FieldVector v, int i, SqlTypeName type) {
    if (v.isNull(i)) {
      return null;
    }
    if (v instanceof VarCharVector s) {
      return new String(s.get(i), StandardCharsets.UTF_8);
    } else if (v instanceof BitVector b) {
      return b.get(i) != 0;
    } else if (v instanceof DecimalVector d) {
      return d.getObject(i);
    } else if (v instanceof DateDayVector d) {
      return d.get(i);
    } else if (v instanceof TimeStampVector ts) {
      return millis(ts.get(i), ((ArrowType.Timestamp) ts.getField().getType()).getUnit());
    } else if (v instanceof BaseIntVector n) {
      return number(n.getValueAsLong(i), type);
    } else if (v instanceof FloatingPointVector f) {
      return type == SqlTypeName.REAL ? (Object) (float) f.getValueAsDouble(i) : (Object) f.getValueAsDouble(i);
    }
    throw new NotSupportedException("JDBC results from Arrow " + v.getField().getType() + " are not supported");
  }

  /** An integer in the boxed type Avatica's accessor for {@code type} casts to. */
  private static Object number(long x, SqlTypeName type) {
    return switch (type) {
      case TINYINT -> (byte) x;
      case SMALLINT -> (short) x;
      case INTEGER -> (int) x;
      default -> x;
    };
  }

  private static long millis(long value, org.apache.arrow.vector.types.TimeUnit unit) {
    return switch (unit) {
      case SECOND -> value * 1000;
      case MILLISECOND -> value;
      case MICROSECOND -> Math.floorDiv(value, 1000L);
      case NANOSECOND -> Math.floorDiv(value, 1_000_000L);
    };
  }
}
