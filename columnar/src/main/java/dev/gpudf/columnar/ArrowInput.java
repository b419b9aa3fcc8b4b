package dev.gpudf.columnar;

import dev.gpudf.columnar.error.UserException;
import java.math.BigInteger;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
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
      checkColumn(v, rows, provider, source);
    }
  }

  /**
   * {@link #check}'s checks of one column {@code v} of a batch of {@code rows} rows, whose schema
   * was checked ({@link #checkSchema}); columns of one batch may be checked on several threads.
   */
  public static void checkColumn(FieldVector v, int rows, DictionaryProvider provider, String source) {
    String column = source + ": column '" + v.getName() + "'";
    if (v.getValueCount() != rows) {
      throw new UserException(column + " has " + v.getValueCount() + " values in a batch of " + rows + " rows");
    }
    validate(v, column);
    if (v.getField().getDictionary() != null) {
      codes(v, provider, column);
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
      } else if (v instanceof BaseVariableWidthVector w) {
        // Arrow's full validation of strings formats a message for every offset it checks and
        // decodes every value: most of a Parquet scan's time; the same checks, on raw memory
        ValueVectorUtility.validate(w);
        offsetsAndText(w, column);
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
   * BigDecimal a value made this check more than half of a Parquet scan's time).
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
      long low = MemoryUtil.getLong(address + r * 16L);
      long high = MemoryUtil.getLong(address + r * 16L + 8);
      boolean fits = high == low >> 63 && (precision > 18 || (low < limit && low > -limit));
      if (!fits && !d.isNull(r) && d.getObject(r).unscaledValue().abs().compareTo(wide) >= 0) {
        throw new UserException(column + " row " + r + " holds " + d.getObject(r) + ", more digits than its type DECIMAL("
            + precision + ", " + d.getScale() + ") has");
      }
    }
  }

  /**
   * The offsets of {@code w} start at 0 or more, never run backwards and end inside its data;
   * for a string column, every non-NULL value is UTF-8 (no overlong forms, surrogates or code
   * points past U+10FFFF). Data that is all ASCII, the common case, is checked 8 bytes at a time.
   */
  private static void offsetsAndText(BaseVariableWidthVector w, String column) {
    int count = w.getValueCount();
    if (count == 0) {
      return;
    }
    org.apache.arrow.memory.ArrowBuf offsets = w.getOffsetBuffer();
    org.apache.arrow.memory.ArrowBuf data = w.getDataBuffer();
    if (offsets.capacity() < (count + 1L) * 4) {
      throw new UserException(column + " has " + offsets.capacity() + " bytes of offsets, too few for " + count + " rows");
    }
    long at = offsets.memoryAddress();
    int first = MemoryUtil.getInt(at);
    if (first < 0) {
      throw new UserException(column + " is malformed: its first offset is " + first);
    }
    int previous = first;
    for (int r = 0; r < count; r++) {
      int next = MemoryUtil.getInt(at + (r + 1) * 4L);
      if (next < previous) {
        throw new UserException(column + " is malformed: offsets run backwards at row " + r + " (" + previous + " then "
            + next + ")");
      }
      previous = next;
    }
    if (previous > data.capacity()) {
      throw new UserException(column + " is malformed: its offsets end at " + previous + ", past its " + data.capacity()
          + " bytes of data");
    }
    if (!(w instanceof org.apache.arrow.vector.VarCharVector) || ascii(data.memoryAddress() + first, previous - first)) {
      return;
    }
    for (int r = 0; r < count; r++) {
      int start = MemoryUtil.getInt(at + r * 4L);
      int end = MemoryUtil.getInt(at + (r + 1) * 4L);
      if (!w.isNull(r) && !utf8(data.memoryAddress(), start, end)) {
        throw new UserException(column + " row " + r + " is not UTF-8");
      }
    }
  }

  private static boolean ascii(long address, long length) {
    long i = 0;
    for (; i + 8 <= length; i += 8) {
      if ((MemoryUtil.getLong(address + i) & 0x8080808080808080L) != 0) {
        return false;
      }
    }
    for (; i < length; i++) {
      if (MemoryUtil.getByte(address + i) < 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether bytes {@code start} to {@code end} after {@code address} are well-formed UTF-8. */
  public static boolean utf8(long address, int start, int end) {
    int i = start;
    while (i < end) {
      int b = MemoryUtil.getByte(address + i) & 0xff;
      if (b < 0x80) {
        i++;
        continue;
      }
      int length;
      int least;
      if ((b & 0xe0) == 0xc0) {
        length = 2;
        least = 0x80;
      } else if ((b & 0xf0) == 0xe0) {
        length = 3;
        least = 0x800;
      } else if ((b & 0xf8) == 0xf0) {
        length = 4;
        least = 0x10000;
      } else {
        return false;
      }
      if (end - i < length) {
        return false;
      }
      int point = b & (0x7f >> length);
      for (int k = 1; k < length; k++) {
        int c = MemoryUtil.getByte(address + i + k) & 0xff;
        if ((c & 0xc0) != 0x80) {
          return false;
        }
        point = point << 6 | c & 0x3f;
      }
      if (point < least || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) {
        return false;
      }
      i += length;
    }
    return true;
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
