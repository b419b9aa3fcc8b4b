package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;

/** {@link ArrowInput} refuses each kind of malformed batch and takes well-formed ones, edge values included. */
class ArrowInputTest {
  private static VectorSchemaRoot root(FieldVector v, int rows) {
    VectorSchemaRoot r = new VectorSchemaRoot(List.of(v));
    r.setRowCount(rows);
    return r;
  }

  private static String refused(VectorSchemaRoot r, DictionaryProvider p) {
    return assertThrows(UserException.class, () -> ArrowInput.check(r, p, "test")).getMessage();
  }

  @Test
  void decimalsWithAllTheirDigitsPassAndMoreAreRefused() {
    try (RootAllocator a = new RootAllocator(); DecimalVector d = new DecimalVector("m", a, 7, 2)) {
      d.allocateNew(3);
      d.setSafe(0, new BigDecimal("12345.67"));
      d.setSafe(1, new BigDecimal("-99999.99"));
      d.setNull(2);
      try (VectorSchemaRoot r = root(d, 3)) {
        assertDoesNotThrow(() -> ArrowInput.check(r, null, "test"));
        // the unscaled value 10^7 has 8 digits: write it around setSafe's own check
        d.getDataBuffer().setLong(32, 10_000_000L);
        d.getDataBuffer().setLong(40, 0L);
        d.setIndexDefined(2);
        String m = refused(r, null);
        assertTrue(m.contains("row 2 holds 100000.00, more digits than its type DECIMAL(7, 2)"), m);
      }
    }
  }

  /**
   * The check reads the 128-bit words itself: at each precision around the 64-bit boundary (1, 18,
   * 19, 38), the largest value with the type's digits passes and the next one is refused, both
   * signs, with a NULL slot holding an out-of-range value in between (NULLs are never checked).
   */
  @Test
  void everyPrecisionTakesExactlyItsDigits() {
    for (int precision : new int[] {1, 9, 18, 19, 20, 38}) {
      java.math.BigInteger most = java.math.BigInteger.TEN.pow(precision).subtract(java.math.BigInteger.ONE);
      for (java.math.BigInteger sign : List.of(java.math.BigInteger.ONE, java.math.BigInteger.ONE.negate())) {
        try (RootAllocator a = new RootAllocator(); DecimalVector d = new DecimalVector("m", a, precision, 0)) {
          d.allocateNew(3);
          d.setSafe(0, new BigDecimal(most.multiply(sign)));
          d.setNull(1);
          d.setSafe(2, BigDecimal.ZERO);
          raw(d, 1, java.math.BigInteger.TEN.pow(precision).multiply(sign));
          d.setNull(1);
          try (VectorSchemaRoot r = root(d, 3)) {
            assertDoesNotThrow(() -> ArrowInput.check(r, null, "test"), precision + " digits, " + sign);
            raw(d, 2, most.add(java.math.BigInteger.ONE).multiply(sign));
            String m = refused(r, null);
            assertTrue(m.contains("row 2 holds") && m.contains("more digits than its type DECIMAL(" + precision + ", 0)"), m);
          }
        }
      }
    }
  }

  /** Writes {@code value} into slot {@code row} of {@code d} around setSafe's own precision check, as valid. */
  private static void raw(DecimalVector d, int row, java.math.BigInteger value) {
    d.getDataBuffer().setLong(row * 16L, value.longValue());
    d.getDataBuffer().setLong(row * 16L + 8, value.shiftRight(64).longValue());
    d.setIndexDefined(row);
  }

  /**
   * Every non-NULL string must be UTF-8, judged value by value: a cut sequence, a stray
   * continuation byte, overlong forms, surrogates, code points past U+10FFFF and 5-byte forms are
   * refused, the same bytes under a NULL pass, and a character split across two values is refused
   * though their concatenation is UTF-8.
   */
  @Test
  void stringsAreUtf8WhereTheyAreNotNull() {
    byte[][] bad = {{(byte) 0xc3}, {(byte) 0x80}, {(byte) 0xc0, (byte) 0xaf}, {(byte) 0xe0, (byte) 0x80, (byte) 0xaf},
        {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
        {(byte) 0xf8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80}, {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', (byte) 0xe2, (byte) 0x82}};
    List<String> good = List.of("å", "😀", "€", "abcdefghijklmnop", "\u0080", "\u07ff", "\uffff", "\udbff\udfff", "");
    for (byte[] b : bad) {
      for (boolean isNull : new boolean[] {false, true}) {
        try (RootAllocator a = new RootAllocator(); VarCharVector v = new VarCharVector("s", a)) {
          v.allocateNew();
          v.setSafe(0, "ok".getBytes(StandardCharsets.UTF_8));
          v.setSafe(1, b);
          v.setSafe(2, "x".getBytes(StandardCharsets.UTF_8));
          if (isNull) {
            v.setNull(1);
          }
          v.setValueCount(3);
          try (VectorSchemaRoot r = root(v, 3)) {
            if (isNull) {
              assertDoesNotThrow(() -> ArrowInput.check(r, null, "test"), java.util.Arrays.toString(b));
            } else {
              String m = refused(r, null);
              assertTrue(m.equals("test: column 's' row 1 is not UTF-8"), m);
            }
          }
        }
      }
    }
    try (RootAllocator a = new RootAllocator(); VarCharVector v = new VarCharVector("s", a)) {
      v.allocateNew();
      for (int i = 0; i < good.size(); i++) {
        v.setSafe(i, good.get(i).getBytes(StandardCharsets.UTF_8));
      }
      v.setValueCount(good.size());
      try (VectorSchemaRoot r = root(v, good.size())) {
        assertDoesNotThrow(() -> ArrowInput.check(r, null, "test"));
      }
      v.setSafe(0, new byte[] {(byte) 0xc3});
      v.setSafe(1, new byte[] {(byte) 0xa5});
      v.setValueCount(2);
      try (VectorSchemaRoot r = root(v, 2)) {
        assertTrue(refused(r, null).equals("test: column 's' row 0 is not UTF-8"));
      }
    }
  }

  @Test
  void stringOffsetsOutsideTheDataAndShortBuffersAreRefused() {
    try (RootAllocator a = new RootAllocator(); VarCharVector v = new VarCharVector("s", a)) {
      v.allocateNew();
      v.setSafe(0, "åä".getBytes(StandardCharsets.UTF_8));
      v.setSafe(1, "x".getBytes(StandardCharsets.UTF_8));
      v.setValueCount(2);
      try (VectorSchemaRoot r = root(v, 2)) {
        assertDoesNotThrow(() -> ArrowInput.check(r, null, "test"));
        v.getOffsetBuffer().setInt(4, 70_000);
        assertTrue(refused(r, null).startsWith("test: column 's' is malformed"));
        v.getOffsetBuffer().setInt(4, 4);
        v.setValueCount(2);
        r.setRowCount(2);
        // a batch that claims more rows than its column has values
        v.setValueCount(1);
        assertTrue(refused(r, null).contains("has 1 values in a batch of 2 rows"));
      }
    }
  }

  @Test
  void dictionaryCodesOutsideTheirDictionaryAreRefused() {
    try (RootAllocator a = new RootAllocator(); VarCharVector values = new VarCharVector("dict", a)) {
      values.allocateNew();
      values.setSafe(0, "red".getBytes(StandardCharsets.UTF_8));
      values.setSafe(1, "blue".getBytes(StandardCharsets.UTF_8));
      values.setValueCount(2);
      DictionaryEncoding encoding = new DictionaryEncoding(7, false, new ArrowType.Int(32, true));
      Dictionary dictionary = new Dictionary(values, encoding);
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider(dictionary);
      try (IntVector codes = new IntVector("c", new FieldType(true, new ArrowType.Int(32, true), encoding), a)) {
        codes.allocateNew(3);
        codes.set(0, 1);
        codes.set(1, 0);
        codes.setNull(2);
        codes.setValueCount(3);
        try (VectorSchemaRoot r = root(codes, 3)) {
          assertDoesNotThrow(() -> ArrowInput.check(r, provider, "test"));
          codes.set(1, 2);
          assertTrue(refused(r, provider).contains("row 1 has dictionary code 2, outside its dictionary of 2 values"));
          codes.set(1, -1);
          assertTrue(refused(r, provider).contains("dictionary code -1"));
          assertTrue(refused(r, null).contains("its dictionary 7 did not come with the data"));
        }
      }
    }
  }
}
