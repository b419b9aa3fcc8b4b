package dev.gpudf.sql;

import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.rel.type.RelDataTypeSystemImpl;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * Calcite's type system set to what the kernels compute: decimals up to precision 38, SUM of
 * integers as BIGINT and of DECIMAL(p, s) as DECIMAL(38, s), AVG as DOUBLE (as DuckDB does),
 * and string literals of different lengths meeting in VALUES, CASE or UNION as VARCHAR.
 */
public final class GpudfTypeSystem extends RelDataTypeSystemImpl {
  public static final GpudfTypeSystem INSTANCE = new GpudfTypeSystem();

  private GpudfTypeSystem() {}

  @Override
  public int getMaxScale(SqlTypeName t) {
    return t == SqlTypeName.DECIMAL ? 38 : super.getMaxScale(t);
  }

  /**
   * Calcite still reads these two (not {@link #getMaxPrecision}) where decimals of different
   * scales meet in COALESCE, CASE, VALUES and UNION; left at their default of 19 they cut
   * {@code COALESCE(SUM(DECIMAL(7,2) column), 0)} to DECIMAL(19, 0), dropping the cents.
   */
  @Override
  @SuppressWarnings("deprecation")
  public int getMaxNumericPrecision() {
    return 38;
  }

  @Override
  @SuppressWarnings("deprecation")
  public int getMaxNumericScale() {
    return 38;
  }

  /** Timestamps to nanoseconds (Arrow's finest unit), decimals to 38 digits. */
  @Override
  public int getMaxPrecision(SqlTypeName t) {
    return switch (t) {
      case TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE -> 9;
      case DECIMAL -> 38;
      default -> super.getMaxPrecision(t);
    };
  }

  /**
   * Calcite would type {@code VALUES ('a'), ('bcd')} as CHAR(3) and pad 'a' with spaces, which
   * then no longer equals a VARCHAR 'a' (the kernels compare bytes, as DuckDB and PostgreSQL do).
   */
  @Override
  public boolean shouldConvertRaggedUnionTypesToVarying() {
    return true;
  }

  @Override
  public RelDataType deriveSumType(RelDataTypeFactory f, RelDataType argument) {
    SqlTypeName t = argument.getSqlTypeName();
    RelDataType sum = switch (t) {
      case TINYINT, SMALLINT, INTEGER, BIGINT -> f.createSqlType(SqlTypeName.BIGINT);
      case DECIMAL -> f.createSqlType(SqlTypeName.DECIMAL, 38, argument.getScale());
      case REAL, FLOAT, DOUBLE -> f.createSqlType(SqlTypeName.DOUBLE);
      default -> argument;
    };
    return f.createTypeWithNullability(sum, argument.isNullable());
  }

  /**
   * A quotient with a decimal operand is a DOUBLE, as in DuckDB: a decimal quotient at a fixed
   * scale (Calcite's rule) rounds before the rest of the expression ({@code a / b * 100} lost
   * digits). Division by zero still fails the query, as in PostgreSQL (DuckDB gives infinity).
   * Integer by integer stays integer division, as in PostgreSQL and SQLite.
   */
  @Override
  public RelDataType deriveDecimalDivideType(RelDataTypeFactory f, RelDataType dividend, RelDataType divisor) {
    if (!org.apache.calcite.sql.type.SqlTypeUtil.isExactNumeric(dividend)
        || !org.apache.calcite.sql.type.SqlTypeUtil.isExactNumeric(divisor)
        || (!org.apache.calcite.sql.type.SqlTypeUtil.isDecimal(dividend) && !org.apache.calcite.sql.type.SqlTypeUtil.isDecimal(divisor))) {
      return super.deriveDecimalDivideType(f, dividend, divisor);
    }
    return f.createTypeWithNullability(f.createSqlType(SqlTypeName.DOUBLE), dividend.isNullable() || divisor.isNullable());
  }

  @Override
  public RelDataType deriveAvgAggType(RelDataTypeFactory f, RelDataType argument) {
    return f.createTypeWithNullability(f.createSqlType(SqlTypeName.DOUBLE), argument.isNullable());
  }
}
