package dev.gpudf.spark;

import java.util.List;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.spark.sql.catalyst.expressions.Murmur3HashFunction$;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType$;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType$;
import org.apache.spark.sql.types.FloatType$;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.ShortType$;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.unsafe.hash.Murmur3_x86_32;

/**
 * The partition Spark's {@code HashPartitioning} sends each row to, {@code pmod(Murmur3Hash(keys,
 * 42), n)}, computed over Arrow columns with Spark's own hash functions: a gpudf exchange on one
 * side of a join and a Spark exchange on the other send equal keys to the same partition. Integers,
 * dates and strings are hashed in typed loops (as Spark's hash does them: {@code hashInt}, {@code
 * hashLong}, {@code hashUnsafeBytes} of the UTF-8 bytes); booleans, floating point and decimals
 * through Spark's interpreted hash, value by value. A NULL key leaves the hash as it was (Spark's
 * rule).
 */
final class SparkPartitionIds {
  /** Spark's seed for {@code HashPartitioning}. */
  static final int SEED = 42;

  private SparkPartitionIds() {}

  /** Refuses a key of {@code type} whose hash this does not compute as Spark does. */
  static void check(DataType type) {
    if (type instanceof StringType s) {
      if (!s.supportsBinaryEquality()) {
        throw new ExprTranslator.Refused("a partitioning key with collation " + s.typeName());
      }
      return;
    }
    if (type instanceof DecimalType d) {
      if (d.precision() > org.apache.spark.sql.types.Decimal.MAX_LONG_DIGITS()) {
        throw new ExprTranslator.Refused("a partitioning key of " + type.simpleString() + " (over 18 digits)");
      }
      return;
    }
    if (type == IntegerType$.MODULE$ || type == LongType$.MODULE$ || type == DateType$.MODULE$
        || type == ShortType$.MODULE$ || type == ByteType$.MODULE$ || type == BooleanType$.MODULE$
        || type == DoubleType$.MODULE$ || type == FloatType$.MODULE$) {
      return;
    }
    throw new ExprTranslator.Refused("a partitioning key of " + type.simpleString());
  }

  /**
   * Each of the first {@code rows} rows' partition in {@code [0, partitions)}: the hash of {@code
   * keys} (of Spark's {@code types}, each checked by {@link #check}) in order, modulo {@code
   * partitions}, made non-negative.
   */
  static int[] of(List<FieldVector> keys, List<DataType> types, int rows, int partitions) {
    if (partitions < 1) {
      throw new IllegalArgumentException(partitions + " partitions");
    }
    int[] hash = new int[rows];
    java.util.Arrays.fill(hash, SEED);
    for (int k = 0; k < keys.size(); k++) {
      hash(keys.get(k), types.get(k), rows, hash);
    }
    for (int r = 0; r < rows; r++) {
      int m = hash[r] % partitions;
      hash[r] = m < 0 ? m + partitions : m;
    }
    return hash;
  }

  /** Each row's hash in {@code hash} updated with its value of {@code v} (unchanged where NULL). */
  private static void hash(FieldVector v, DataType type, int rows, int[] hash) {
    if (v.getValueCount() < rows) {
      throw new dev.gpudf.columnar.error.InternalException("a partitioning key of " + v.getValueCount()
          + " values for " + rows + " rows");
    }
    if (v instanceof IntVector || v instanceof DateDayVector) {
      BaseFixedWidthVector f = (BaseFixedWidthVector) v;
      long data = f.getDataBufferAddress();
      for (int r = 0; r < rows; r++) {
        if (!f.isNull(r)) {
          hash[r] = Murmur3_x86_32.hashInt(org.apache.arrow.memory.util.MemoryUtil.getInt(data + 4L * r), hash[r]);
        }
      }
    } else if (v instanceof BigIntVector f) {
      long data = f.getDataBufferAddress();
      for (int r = 0; r < rows; r++) {
        if (!f.isNull(r)) {
          hash[r] = Murmur3_x86_32.hashLong(org.apache.arrow.memory.util.MemoryUtil.getLong(data + 8L * r), hash[r]);
        }
      }
    } else if (v instanceof VarCharVector s) {
      long data = s.getDataBufferAddress();
      long offsets = s.getOffsetBufferAddress();
      for (int r = 0; r < rows; r++) {
        if (!s.isNull(r)) {
          int start = org.apache.arrow.memory.util.MemoryUtil.getInt(offsets + 4L * r);
          int end = org.apache.arrow.memory.util.MemoryUtil.getInt(offsets + 4L * r + 4);
          hash[r] = Murmur3_x86_32.hashUnsafeBytes(null, data + start, end - start, hash[r]);
        }
      }
    } else if (v instanceof DecimalVector d && type instanceof DecimalType) {
      // Spark hashes a decimal of up to 18 digits (check refuses wider ones) as its unscaled long: the
      // low 8 bytes of Arrow's 16-byte little-endian value
      long data = d.getDataBufferAddress();
      for (int r = 0; r < rows; r++) {
        if (!d.isNull(r)) {
          hash[r] = Murmur3_x86_32.hashLong(org.apache.arrow.memory.util.MemoryUtil.getLong(data + 16L * r), hash[r]);
        }
      }
    } else if (v instanceof SmallIntVector || v instanceof TinyIntVector || v instanceof BitVector
        || v instanceof Float8Vector || v instanceof Float4Vector) {
      for (int r = 0; r < rows; r++) {
        if (!v.isNull(r)) {
          hash[r] = (int) Murmur3HashFunction$.MODULE$.hash(v.getObject(r), type, hash[r]);
        }
      }
    } else {
      throw new dev.gpudf.columnar.error.InternalException("a partitioning key of " + type.simpleString()
          + " held as " + v.getField().getType());
    }
  }
}
