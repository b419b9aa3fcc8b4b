package dev.gpudf.columnar;

import dev.gpudf.columnar.error.UserException;
import java.math.BigInteger;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.util.ValueVectorUtility;
import org.apache.arrow.vector.validate.ValidateUtil;

/**
 * Arrow batches from outside the process (a client's DoPut, bound parameters, an IPC file) are
 * checked here before anything copies or reads them: the bulk copies gpudf uses trust offsets and
 * lengths, so a batch whose string offsets point past its data would copy the server's own memory
 * into a table, or fault. Arrow's full validation checks buffer sizes against the row count,
 * offsets monotonic and inside their data, and nested children; this adds the row counts of the
 * columns and the range of dictionary codes.
 */
public final class ArrowInput {
  private ArrowInput() {}

  /**
   * Throws a {@link UserException} naming {@code source} and the column when {@code root} (with
   * the dictionaries of {@code provider}, which may be null when no column is encoded) is not a
   * well-formed batch.
   */
  public static void check(VectorSchemaRoot root, DictionaryProvider provider, String source) {
    checkSchema(root.getSchema(), source);
    int rows = root.getRowCount();
    if (rows < 0) {
      throw new UserException(source + ": a batch with " + rows + " rows");
    }
    for (FieldVector v : root.getFieldVectors()) {
      String column = source + ": column '" + v.getName() + "'";
      if (v.getValueCount() != rows) {
        throw new UserException(column + " has " + v.getValueCount() + " values in a batch of " + rows + " rows");
      }
      validate(v, column);
      if (v.getField().getDictionary() != null) {
        codes(v, provider, column);
      }
    }
  }

  /**
   * Throws a {@link UserException} when a column of {@code schema} cannot be: one without a name,
   * a decimal whose precision its width cannot hold, or whose scale exceeds its precision. (A schema with no
   * batches is never checked batch by batch, so its types are checked here.)
   */
  public static void checkSchema(org.apache.arrow.vector.types.pojo.Schema schema, String source) {
    int position = 0;
    for (org.apache.arrow.vector.types.pojo.Field f : schema.getFields()) {
      position++;
      if (f.getName() == null || f.getName().isEmpty()) {
        throw new UserException(source + ": column " + position + " has no name");
      }
      if (f.getType() instanceof org.apache.arrow.vector.types.pojo.ArrowType.Decimal d) {
        int most = d.getBitWidth() == 256 ? 76 : 38;
        if (d.getPrecision() < 1 || d.getPrecision() > most || d.getScale() < 0 || d.getScale() > d.getPrecision()) {
          throw new UserException(source + ": column '" + f.getName() + "' has type DECIMAL(" + d.getPrecision() + ", "
              + d.getScale() + ") in " + d.getBitWidth() + " bits, which cannot be");
        }
      }
    }
  }

  private static void validate(FieldVector v, String column) {
    try {
      if (v instanceof DecimalVector d) {
        // Arrow 18's full validation refuses a value with all the type's digits (12345.67 in
        // DECIMAL(7, 2)): the buffers are checked by Arrow, the digits here
        ValueVectorUtility.validate(d);
        digits(d, column);
      } else {
        v.validateFull();
      }
    } catch (ValidateUtil.ValidateException | IndexOutOfBoundsException | IllegalArgumentException
        | NegativeArraySizeException e) {
      // Arrow's own validation reads a string whose offsets run backwards before it refuses them
      throw new UserException(column + " is malformed: " + e.getMessage(), e);
    }
  }

  /**
   * Every value of {@code d} within its precision. The 128-bit values are read as two longs (Arrow
   * keeps them little-endian, as every platform gpudf runs on is): a value whose high word only
   * extends the low word's sign is below 2^63, so for precisions of 19 and more it fits, and for
   * smaller ones one comparison of the low word decides. Only the rest take a BigInteger (a
   * BigDecimal a value made this check a third of a Parquet scan's time).
   */
  private static void digits(DecimalVector d, String column) {
    int precision = d.getPrecision();
    long limit = precision <= 18 ? LONG_POWERS[precision] : Long.MAX_VALUE;
    BigInteger wide = BigInteger.TEN.pow(precision);
    org.apache.arrow.memory.ArrowBuf data = d.getDataBuffer();
    int count = d.getValueCount();
    if (data.capacity() < count * 16L) {
      throw new UserException(column + " holds " + data.capacity() + " bytes of values, too few for " + count + " rows");
    }
    // bounds checked once above: ArrowBuf's checks on each read were most of this loop's time
    long address = data.memoryAddress();
    for (int r = 0; r < count; r++) {
      long low = org.apache.arrow.memory.util.MemoryUtil.getLong(address + r * 16L);
      long high = org.apache.arrow.memory.util.MemoryUtil.getLong(address + r * 16L + 8);
      boolean fits = high == low >> 63 && (precision > 18 || (low < limit && low > -limit));
      if (!fits && !d.isNull(r) && d.getObject(r).unscaledValue().abs().compareTo(wide) >= 0) {
        throw new UserException(column + " row " + r + " holds " + d.getObject(r) + ", more digits than its type DECIMAL("
            + precision + ", " + d.getScale() + ") has");
      }
    }
  }

  /** 10^0 .. 10^18. */
  private static final long[] LONG_POWERS = java.util.stream.LongStream.iterate(1, p -> p * 10).limit(19).toArray();

  /** Every code of an encoded column must index its dictionary, whose values are checked too. */
  private static void codes(FieldVector v, DictionaryProvider provider, String column) {
    long id = v.getField().getDictionary().getId();
    Dictionary d = provider == null ? null : provider.lookup(id);
    if (d == null) {
      throw new UserException(column + " is dictionary-encoded, and its dictionary " + id + " did not come with the data");
    }
    FieldVector values = d.getVector();
    validate(values, column + "'s dictionary");
    if (!(v instanceof BaseIntVector codes)) {
      throw new UserException(column + " is dictionary-encoded with codes of type " + v.getField().getType()
          + " (an integer type is needed)");
    }
    long size = values.getValueCount();
    for (int r = 0; r < v.getValueCount(); r++) {
      if (!v.isNull(r)) {
        long code = codes.getValueAsLong(r);
        if (code < 0 || code >= size) {
          throw new UserException(column + " row " + r + " has dictionary code " + code + ", outside its dictionary of "
              + size + " values");
        }
      }
    }
  }
}
