package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import java.util.Objects;

/**
 * One typed value on the host, the result of a reduction. {@code value} is null for SQL NULL,
 * else a {@link Long} (integers, DATE days, TIMESTAMP units), {@link Double} (floats),
 * {@link java.math.BigDecimal} (DECIMAL), {@link Boolean} or {@link String}.
 *
 * @param type the value's type
 * @param value the value, or null
 */
public record Scalar(DataType type, Object value) {
  public Scalar {
    Objects.requireNonNull(type, "type");
  }

  /** The SQL NULL of {@code type}. */
  public static Scalar nullOf(DataType type) {
    return new Scalar(type, null);
  }

  public boolean isNull() {
    return value == null;
  }

  @Override
  public String toString() {
    return type + " " + value;
  }
}
