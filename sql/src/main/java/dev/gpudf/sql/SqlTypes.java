package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.TimeUnit;
import dev.gpudf.columnar.error.NotSupportedException;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.sql.type.SqlTypeName;

/** gpudf {@link DataType}s as Calcite types and back. */
public final class SqlTypes {
  private SqlTypes() {}

  /** The nullable Calcite type of a gpudf type. */
  public static RelDataType toCalcite(RelDataTypeFactory f, DataType t) {
    RelDataType r = switch (t.id()) {
      case BOOL -> f.createSqlType(SqlTypeName.BOOLEAN);
      case INT8 -> f.createSqlType(SqlTypeName.TINYINT);
      case INT16 -> f.createSqlType(SqlTypeName.SMALLINT);
      case INT32 -> f.createSqlType(SqlTypeName.INTEGER);
      case INT64 -> f.createSqlType(SqlTypeName.BIGINT);
      case FLOAT32 -> f.createSqlType(SqlTypeName.REAL);
      case FLOAT64 -> f.createSqlType(SqlTypeName.DOUBLE);
      case DECIMAL -> f.createSqlType(SqlTypeName.DECIMAL, t.precision(), t.scale());
      case DATE -> f.createSqlType(SqlTypeName.DATE);
      case TIMESTAMP -> f.createSqlType(t.timeZone() == null ? SqlTypeName.TIMESTAMP : SqlTypeName.TIMESTAMP_WITH_LOCAL_TIME_ZONE,
          switch (t.timeUnit()) {
            case SECOND -> 0;
            case MILLISECOND -> 3;
            case MICROSECOND -> 6;
            case NANOSECOND -> 9;
          });
      case STRING -> f.createSqlType(SqlTypeName.VARCHAR);
    };
    return f.createTypeWithNullability(r, true);
  }

  /** The gpudf type of a Calcite type; throws {@link NotSupportedException} for others. */
  public static DataType fromCalcite(RelDataType t) {
    return switch (t.getSqlTypeName()) {
      case BOOLEAN -> DataType.BOOL;
      case TINYINT -> DataType.INT8;
      case SMALLINT -> DataType.INT16;
      case INTEGER -> DataType.INT32;
      case BIGINT -> DataType.INT64;
      case REAL, FLOAT -> DataType.FLOAT32;
      case DOUBLE -> DataType.FLOAT64;
      case DECIMAL -> DataType.decimal(t.getPrecision(), t.getScale());
      case DATE -> DataType.DATE;
      case TIMESTAMP -> DataType.timestamp(unit(t.getPrecision()), null);
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE -> DataType.timestamp(unit(t.getPrecision()), "UTC");
      case CHAR, VARCHAR -> DataType.STRING;
      default -> throw new NotSupportedException("SQL type " + t.getFullTypeString() + " is not supported");
    };
  }

  private static TimeUnit unit(int precision) {
    return precision <= 0 ? TimeUnit.SECOND : precision <= 3 ? TimeUnit.MILLISECOND
        : precision <= 6 ? TimeUnit.MICROSECOND : TimeUnit.NANOSECOND;
  }
}
