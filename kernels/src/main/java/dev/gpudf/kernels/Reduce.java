package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * Reductions of one column to a {@link Scalar}, on the GPU for a {@link DeviceColumn} and on the
 * CPU for a {@link HostColumn}. Both backends produce partial results in the layouts of {@link
 * Partial} (the GPU one, its blocks' partials combined on the device; the CPU twin one per chunk)
 * and this class combines them, so the two agree exactly except for the order of floating-point
 * additions.
 */
public final class Reduce {
  private Reduce() {}

  /** The partial result layouts shared by the kernels ({@code reduce.cu}) and the CPU twin. */
  enum Partial {
    /** lo, hi (signed 128-bit sum), count. */
    SUM_INT(3, "reduce_sum"),
    /** sum (double bits), count (unused: the column knows it). */
    SUM_FLOAT(2, "reduce_sum"),
    /** lo, mid, hi (signed 192-bit sum), count. */
    SUM_D128(4, "reduce_sum"),
    /** min, max, count. */
    MINMAX_INT(3, "reduce_minmax"),
    /** smallest non-NaN, largest non-NaN (double bits), count, NaN count. */
    MINMAX_FLOAT(4, "reduce_minmax"),
    /** min lo, min hi, max lo, max hi, count. */
    MINMAX_D128(5, "reduce_minmax"),
    /** count, mean, sum of squared deviations (double bits). */
    MOMENTS(3, "reduce_moments");

    final int longs;
    final String kernelPrefix;

    Partial(int longs, String kernelPrefix) {
      this.longs = longs;
      this.kernelPrefix = kernelPrefix;
    }
  }

  /** Reduces {@code column} by {@code op}; see {@link Reduction} for semantics and result types. */
  public static Scalar reduce(Exec exec, Column column, Reduction op) {
    DataType type = column.type();
    long rows = column.rowCount();
    long valid = rows - column.nullCount();
    switch (op) {
      case COUNT_ALL:
        return new Scalar(DataType.INT64, rows);
      case COUNT_VALID:
        return new Scalar(DataType.INT64, valid);
      case ANY:
      case ALL: {
        require(type.id() == TypeId.BOOL, op, type);
        if (valid == 0) {
          return Scalar.nullOf(DataType.BOOL);
        }
        long trues = countTrue(exec, column);
        return new Scalar(DataType.BOOL, op == Reduction.ANY ? trues > 0 : trues == valid);
      }
      case MIN:
      case MAX:
        // FALSE < TRUE: MIN is ALL, MAX is ANY
        if (type.id() == TypeId.BOOL) {
          return reduce(exec, column, op == Reduction.MIN ? Reduction.ALL : Reduction.ANY);
        }
        if (type.id() == TypeId.STRING) {
          return RankedExtremes.reduce(exec, column, op == Reduction.MIN);
        }
        break;
      case ANY_VALUE:
      case COUNT_DISTINCT:
        throw new NotSupportedException(op + " is a grouped aggregate (GroupBy), not a reduction of a column");
      default:
        break;
    }
    PhysicalType p = PhysicalType.of(type);
    boolean numeric = p != PhysicalType.BITS && p != PhysicalType.STRING
        && type.id() != TypeId.DATE && type.id() != TypeId.TIMESTAMP;
    DataType result;
    Partial partial;
    switch (op) {
      case SUM -> {
        require(numeric, op, type);
        result = type.id() == TypeId.DECIMAL ? DataType.decimal(DataType.MAX_DECIMAL_PRECISION, type.scale())
            : p.isFloat() ? DataType.FLOAT64 : DataType.INT64;
        partial = p == PhysicalType.D128 ? Partial.SUM_D128 : p.isFloat() ? Partial.SUM_FLOAT : Partial.SUM_INT;
      }
      case MIN, MAX -> {
        require(p != PhysicalType.BITS && p != PhysicalType.STRING, op, type);
        result = type;
        partial = p == PhysicalType.D128 ? Partial.MINMAX_D128 : p.isFloat() ? Partial.MINMAX_FLOAT : Partial.MINMAX_INT;
      }
      case MEAN -> {
        // from the exact (or float) sum rather than a running mean, which turns -inf into NaN
        require(numeric, op, type);
        result = DataType.FLOAT64;
        partial = p == PhysicalType.D128 ? Partial.SUM_D128 : p.isFloat() ? Partial.SUM_FLOAT : Partial.SUM_INT;
      }
      case VAR_SAMP, VAR_POP, STDDEV_SAMP, STDDEV_POP -> {
        require(numeric, op, type);
        result = DataType.FLOAT64;
        partial = Partial.MOMENTS;
      }
      default -> throw new InternalException("reduction " + op + " reached the numeric reductions");
    }
    if (valid == 0) {
      return Scalar.nullOf(result);
    }
    double scale = type.id() == TypeId.DECIMAL ? Math.pow(10, -type.scale()) : 1.0;
    long[] parts = column instanceof DeviceColumn d
        ? GpuReduce.partials(exec, d, partial, scale)
        : CpuReduce.partials((HostColumn) column, partial, scale);
    if (op == Reduction.MEAN) {
      return new Scalar(result, mean(parts, partial, type, valid));
    }
    return switch (partial) {
      case SUM_INT -> sumInt(parts, type, result);
      case SUM_D128 -> sumD128(parts, type, result);
      case SUM_FLOAT -> new Scalar(result, sumFloat(parts));
      case MINMAX_INT -> minMaxInt(parts, op == Reduction.MIN, type);
      case MINMAX_FLOAT -> minMaxFloat(parts, op == Reduction.MIN, type);
      case MINMAX_D128 -> minMaxD128(parts, op == Reduction.MIN, type);
      case MOMENTS -> moments(parts, op);
    };
  }

  /** The valid TRUE rows of BOOL column {@code column}, on its backend (waits for the device). */
  public static long countTrue(Exec exec, Column column) {
    if (column instanceof DeviceColumn d) {
      return Bitmaps.countSet(exec.gpu(), d.data(), d.validity(), d.rowCount(), exec.stream());
    }
    HostColumn h = (HostColumn) column;
    return dev.gpudf.columnar.HostBitmaps.countSet(h.vector().getDataBuffer(),
        h.nullCount() == 0 ? null : h.vector().getValidityBuffer(), h.rowCount());
  }

  private static void require(boolean ok, Reduction op, DataType type) {
    if (!ok) {
      throw new NotSupportedException(op + " over " + type + " is not supported");
    }
  }

  private static BigInteger signed128(long lo, long hi) {
    return BigInteger.valueOf(hi).shiftLeft(64).add(new BigInteger(Long.toUnsignedString(lo)));
  }

  private static double mean(long[] parts, Partial partial, DataType type, long valid) {
    if (partial == Partial.SUM_FLOAT) {
      return sumFloat(parts) / valid;
    }
    BigInteger total = partial == Partial.SUM_INT ? exactSumInt(parts) : exactSumD128(parts);
    int scale = type.id() == TypeId.DECIMAL ? type.scale() : 0;
    return new BigDecimal(total, scale).divide(BigDecimal.valueOf(valid), java.math.MathContext.DECIMAL64).doubleValue();
  }

  private static BigInteger exactSumInt(long[] parts) {
    BigInteger total = BigInteger.ZERO;
    for (int i = 0; i < parts.length; i += Partial.SUM_INT.longs) {
      total = total.add(signed128(parts[i], parts[i + 1]));
    }
    return total;
  }

  private static BigInteger exactSumD128(long[] parts) {
    BigInteger total = BigInteger.ZERO;
    for (int i = 0; i < parts.length; i += Partial.SUM_D128.longs) {
      total = total.add(Int192.value(parts[i], parts[i + 1], parts[i + 2]));
    }
    return total;
  }

  private static Scalar sumInt(long[] parts, DataType type, DataType result) {
    BigInteger total = exactSumInt(parts);
    if (type.id() == TypeId.DECIMAL) {
      return new Scalar(result, checkedDecimal(total, result));
    }
    if (total.bitLength() > 63) {
      throw new UserException("SUM overflows INT64: the exact sum is " + total);
    }
    return new Scalar(result, total.longValue());
  }

  private static Scalar sumD128(long[] parts, DataType type, DataType result) {
    return new Scalar(result, checkedDecimal(exactSumD128(parts), result));
  }

  private static BigDecimal checkedDecimal(BigInteger unscaled, DataType result) {
    BigDecimal d = new BigDecimal(unscaled, result.scale());
    if (d.precision() > result.precision()) {
      throw new UserException("SUM overflows " + result + ": the exact sum is " + d);
    }
    return d;
  }

  private static double sumFloat(long[] parts) {
    double s = 0;
    for (int i = 0; i < parts.length; i += Partial.SUM_FLOAT.longs) {
      s += Double.longBitsToDouble(parts[i]);
    }
    return s;
  }

  private static Scalar minMaxInt(long[] parts, boolean min, DataType type) {
    long best = min ? Long.MAX_VALUE : Long.MIN_VALUE;
    for (int i = 0; i < parts.length; i += Partial.MINMAX_INT.longs) {
      if (parts[i + 2] > 0) {
        best = min ? Math.min(best, parts[i]) : Math.max(best, parts[i + 1]);
      }
    }
    return new Scalar(type, type.id() == TypeId.DECIMAL ? (Object) BigDecimal.valueOf(best, type.scale()) : (Object) best);
  }

  private static Scalar minMaxFloat(long[] parts, boolean min, DataType type) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = Double.NEGATIVE_INFINITY;
    long count = 0;
    long nans = 0;
    for (int i = 0; i < parts.length; i += Partial.MINMAX_FLOAT.longs) {
      lo = Math.min(lo, Double.longBitsToDouble(parts[i]));
      hi = Math.max(hi, Double.longBitsToDouble(parts[i + 1]));
      count += parts[i + 2];
      nans += parts[i + 3];
    }
    double v = min ? (nans == count ? Double.NaN : lo) : (nans > 0 ? Double.NaN : hi);
    return new Scalar(type, v);
  }

  private static Scalar minMaxD128(long[] parts, boolean min, DataType type) {
    BigInteger best = null;
    for (int i = 0; i < parts.length; i += Partial.MINMAX_D128.longs) {
      if (parts[i + 4] > 0) {
        BigInteger v = min ? signed128(parts[i], parts[i + 1]) : signed128(parts[i + 2], parts[i + 3]);
        best = best == null || (min ? v.compareTo(best) < 0 : v.compareTo(best) > 0) ? v : best;
      }
    }
    return new Scalar(type, new BigDecimal(best, type.scale()));
  }

  private static Scalar moments(long[] parts, Reduction op) {
    double n = 0;
    double mean = 0;
    double m2 = 0;
    for (int i = 0; i < parts.length; i += Partial.MOMENTS.longs) {
      double bn = Double.longBitsToDouble(parts[i]);
      if (bn == 0) {
        continue;
      }
      double bMean = Double.longBitsToDouble(parts[i + 1]);
      double bM2 = Double.longBitsToDouble(parts[i + 2]);
      double total = n + bn;
      double d = bMean - mean;
      mean += d * (bn / total);
      m2 += bM2 + d * d * (n * bn / total);
      n = total;
    }
    Double v = switch (op) {
      case VAR_POP -> m2 / n;
      case STDDEV_POP -> Math.sqrt(m2 / n);
      case VAR_SAMP -> n < 2 ? null : m2 / (n - 1);
      case STDDEV_SAMP -> n < 2 ? null : Math.sqrt(m2 / (n - 1));
      default -> throw new IllegalStateException(op.toString());
    };
    return new Scalar(DataType.FLOAT64, v);
  }
}
