package dev.gpudf.columnar;

import dev.gpudf.columnar.error.UserException;
import java.util.Objects;

/**
 * A column's type: a {@link TypeId} plus precision and scale for decimals and unit and time zone
 * for timestamps. On the device, booleans are bit-packed (as in Arrow), decimals of precision up
 * to 18 are scaled int64 and wider ones 128-bit, dates are int32 days, timestamps int64, strings
 * int32 offsets plus UTF-8 bytes.
 *
 * @param id the logical type
 * @param precision decimal precision (1..38), else 0
 * @param scale decimal scale (0..precision), else 0
 * @param timeUnit timestamp unit, else null
 * @param timeZone timestamp zone id, or null for a zone-less timestamp
 */
public record DataType(TypeId id, int precision, int scale, TimeUnit timeUnit, String timeZone) {
  /** Largest decimal precision; the Calcite type system is set to match. */
  public static final int MAX_DECIMAL_PRECISION = 38;
  /** Largest precision stored as a scaled int64 on the device. */
  public static final int MAX_DECIMAL64_PRECISION = 18;

  public static final DataType BOOL = simple(TypeId.BOOL);
  public static final DataType INT8 = simple(TypeId.INT8);
  public static final DataType INT16 = simple(TypeId.INT16);
  public static final DataType INT32 = simple(TypeId.INT32);
  public static final DataType INT64 = simple(TypeId.INT64);
  public static final DataType FLOAT32 = simple(TypeId.FLOAT32);
  public static final DataType FLOAT64 = simple(TypeId.FLOAT64);
  public static final DataType DATE = simple(TypeId.DATE);
  public static final DataType STRING = simple(TypeId.STRING);

  public DataType {
    Objects.requireNonNull(id, "id");
    if (id == TypeId.DECIMAL) {
      if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale < 0 || scale > precision) {
        throw new UserException("invalid DECIMAL(" + precision + ", " + scale + "): precision must be 1.."
            + MAX_DECIMAL_PRECISION + " and scale 0..precision");
      }
    } else if (precision != 0 || scale != 0) {
      throw new UserException(id + " takes no precision or scale");
    }
    if ((id == TypeId.TIMESTAMP) != (timeUnit != null)) {
      throw new UserException("a time unit is required for TIMESTAMP and only there");
    }
    if (id != TypeId.TIMESTAMP && timeZone != null) {
      throw new UserException(id + " takes no time zone");
    }
  }

  private static DataType simple(TypeId id) {
    return new DataType(id, 0, 0, null, null);
  }

  /** DECIMAL(precision, scale). */
  public static DataType decimal(int precision, int scale) {
    return new DataType(TypeId.DECIMAL, precision, scale, null, null);
  }

  /** TIMESTAMP in {@code unit}, zone-less when {@code timeZone} is null. */
  public static DataType timestamp(TimeUnit unit, String timeZone) {
    return new DataType(TypeId.TIMESTAMP, 0, 0, Objects.requireNonNull(unit, "unit"), timeZone);
  }

  /** True for types stored as one fixed-size value per row (all but BOOL and STRING). */
  public boolean isFixedWidth() {
    return id != TypeId.BOOL && id != TypeId.STRING;
  }

  /** True for decimals held as scaled int64 on the device. */
  public boolean isDecimal64() {
    return id == TypeId.DECIMAL && precision <= MAX_DECIMAL64_PRECISION;
  }

  /** Bytes per value on the device, for fixed-width types. */
  public int byteWidth() {
    return switch (id) {
      case INT8 -> 1;
      case INT16 -> 2;
      case INT32, FLOAT32, DATE -> 4;
      case INT64, FLOAT64, TIMESTAMP -> 8;
      case DECIMAL -> isDecimal64() ? 8 : 16;
      case BOOL, STRING -> throw new IllegalArgumentException(id + " has no fixed byte width");
    };
  }

  @Override
  public String toString() {
    return switch (id) {
      case DECIMAL -> "DECIMAL(" + precision + ", " + scale + ")";
      case TIMESTAMP -> "TIMESTAMP(" + timeUnit + (timeZone == null ? "" : ", " + timeZone) + ")";
      default -> id.name();
    };
  }
}
