package dev.gpudf.kernels;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FloatingPointVector;

/**
 * A deliberately plain, row-at-a-time reduction over Arrow vectors (BigInteger and BigDecimal
 * arithmetic, two-pass variance), the oracle the CPU twin is tested against.
 */
final class ReferenceReduce {
  private ReferenceReduce() {}

  /** The expected scalar, or the exception class expected. */
  static Object expected(FieldVector v, Reduction op) {
    DataType t = ArrowTypes.fromArrow(v.getField());
    List<Integer> rows = new ArrayList<>();
    for (int i = 0; i < v.getValueCount(); i++) {
      if (!v.isNull(i)) {
        rows.add(i);
      }
    }
    boolean isFloat = t.id() == TypeId.FLOAT32 || t.id() == TypeId.FLOAT64;
    boolean temporal = t.id() == TypeId.DATE || t.id() == TypeId.TIMESTAMP;
    boolean numeric = !temporal && t.id() != TypeId.BOOL && t.id() != TypeId.STRING;
    switch (op) {
      case COUNT_ALL:
        return new Scalar(DataType.INT64, (long) v.getValueCount());
      case COUNT_VALID:
        return new Scalar(DataType.INT64, (long) rows.size());
      case ANY_VALUE:
      case COUNT_DISTINCT:
        return NotSupportedException.class;
      case ANY:
      case ALL: {
        if (t.id() != TypeId.BOOL) {
          return NotSupportedException.class;
        }
        if (rows.isEmpty()) {
          return Scalar.nullOf(DataType.BOOL);
        }
        long trues = rows.stream().filter(i -> ((BitVector) v).get(i) == 1).count();
        return new Scalar(DataType.BOOL, op == Reduction.ANY ? trues > 0 : trues == rows.size());
      }
      case MIN:
      case MAX: {
        if (rows.isEmpty()) {
          return Scalar.nullOf(t);
        }
        if (t.id() == TypeId.BOOL) {
          boolean any = rows.stream().anyMatch(i -> ((BitVector) v).get(i) == 1);
          boolean all = rows.stream().allMatch(i -> ((BitVector) v).get(i) == 1);
          return new Scalar(t, op == Reduction.MIN ? all : any);
        }
        if (t.id() == TypeId.STRING) {
          // unsigned UTF-8 bytes, a prefix first (not Java's UTF-16 order)
          java.util.Comparator<String> bytewise = (x, y) -> java.util.Arrays.compareUnsigned(
              x.getBytes(java.nio.charset.StandardCharsets.UTF_8), y.getBytes(java.nio.charset.StandardCharsets.UTF_8));
          java.util.stream.Stream<String> xs = rows.stream().map(i -> v.getObject(i).toString());
          return new Scalar(t, (op == Reduction.MIN ? xs.min(bytewise) : xs.max(bytewise)).orElseThrow());
        }
        if (isFloat) {
          List<Double> xs = rows.stream().map(i -> ((FloatingPointVector) v).getValueAsDouble(i)).toList();
          boolean anyNaN = xs.stream().anyMatch(d -> d.isNaN());
          List<Double> real = xs.stream().filter(d -> !d.isNaN()).toList();
          double r = op == Reduction.MIN
              ? (real.isEmpty() ? Double.NaN : real.stream().min(Double::compare).get())
              : (anyNaN ? Double.NaN : real.stream().max(Double::compare).get());
          return new Scalar(t, r);
        }
        BigInteger best = null;
        for (int i : rows) {
          BigInteger x = exact(v, t, i);
          best = best == null || (op == Reduction.MIN ? x.compareTo(best) < 0 : x.compareTo(best) > 0) ? x : best;
        }
        return new Scalar(t, t.id() == TypeId.DECIMAL ? (Object) new BigDecimal(best, t.scale()) : (Object) best.longValueExact());
      }
      case SUM: {
        if (!numeric) {
          return NotSupportedException.class;
        }
        DataType result = t.id() == TypeId.DECIMAL ? DataType.decimal(38, t.scale()) : isFloat ? DataType.FLOAT64 : DataType.INT64;
        if (rows.isEmpty()) {
          return Scalar.nullOf(result);
        }
        if (isFloat) {
          double s = 0;
          for (int i : rows) {
            s += ((FloatingPointVector) v).getValueAsDouble(i);
          }
          return new Scalar(result, s);
        }
        BigInteger s = BigInteger.ZERO;
        for (int i : rows) {
          s = s.add(exact(v, t, i));
        }
        if (t.id() == TypeId.DECIMAL) {
          BigDecimal d = new BigDecimal(s, t.scale());
          return d.precision() > 38 ? UserException.class : new Scalar(result, d);
        }
        return s.bitLength() > 63 ? UserException.class : new Scalar(result, s.longValueExact());
      }
      default: {
        if (!numeric) {
          return NotSupportedException.class;
        }
        if (rows.isEmpty()) {
          return Scalar.nullOf(DataType.FLOAT64);
        }
        double[] xs = rows.stream().mapToDouble(i -> asDouble(v, t, i)).toArray();
        double sum = 0;
        for (double x : xs) {
          sum += x;
        }
        double mean = sum / xs.length;
        double ss = 0;
        for (double x : xs) {
          ss += (x - mean) * (x - mean);
        }
        int n = xs.length;
        Double r = switch (op) {
          case MEAN -> mean;
          case VAR_POP -> ss / n;
          case STDDEV_POP -> Math.sqrt(ss / n);
          case VAR_SAMP -> n < 2 ? null : ss / (n - 1);
          case STDDEV_SAMP -> n < 2 ? null : Math.sqrt(ss / (n - 1));
          default -> throw new IllegalStateException();
        };
        return new Scalar(DataType.FLOAT64, r);
      }
    }
  }

  private static BigInteger exact(FieldVector v, DataType t, int i) {
    if (v instanceof DecimalVector d) {
      return d.getObject(i).unscaledValue();
    }
    // every other integer-like Arrow vector stores its value little-endian at width * i
    int width = switch (t.id()) {
      case INT8 -> 1;
      case INT16 -> 2;
      case INT32, DATE -> 4;
      default -> 8;
    };
    long x = switch (width) {
      case 1 -> v.getDataBuffer().getByte((long) i);
      case 2 -> v.getDataBuffer().getShort(2L * i);
      case 4 -> v.getDataBuffer().getInt(4L * i);
      default -> v.getDataBuffer().getLong(8L * i);
    };
    return BigInteger.valueOf(x);
  }

  private static double asDouble(FieldVector v, DataType t, int i) {
    if (v instanceof FloatingPointVector f) {
      return f.getValueAsDouble(i);
    }
    if (v instanceof DecimalVector d) {
      return d.getObject(i).doubleValue();
    }
    return exact(v, t, i).doubleValue();
  }
}
