package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
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

/** Dictionary-encoded columns decode to their values; one that reaches the type mapping encoded is refused. */
class ArrowDictionariesTest {
  private static final String[] WORDS = {"apple", "pear", "фрукт 🍐", ""};

  @Test
  void encodedColumnsDecodeAndPlainOnesAreShared() {
    try (RootAllocator a = new RootAllocator();
        VarCharVector words = new VarCharVector("words", a)) {
      words.allocateNew();
      for (int i = 0; i < WORDS.length; i++) {
        words.setSafe(i, WORDS[i].getBytes(StandardCharsets.UTF_8));
      }
      words.setValueCount(WORDS.length);
      DictionaryEncoding encoding = new DictionaryEncoding(7, false, new ArrowType.Int(32, true));
      Dictionary dictionary = new Dictionary(words, encoding);
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider(dictionary);
      IntVector codes = new IntVector("fruit", new FieldType(true, new ArrowType.Int(32, true), encoding), a);
      IntVector qty = new IntVector("qty", a);
      int rows = 1000;
      codes.allocateNew(rows);
      qty.allocateNew(rows);
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        if (i % 9 == 4) {
          codes.setNull(i);
          expected.add(null);
        } else {
          codes.set(i, i % WORDS.length);
          expected.add(WORDS[i % WORDS.length]);
        }
        qty.set(i, i);
      }
      codes.setValueCount(rows);
      qty.setValueCount(rows);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(codes, qty))) {
        assertTrue(ArrowDictionaries.encoded(root.getSchema()));
        NotSupportedException raw = assertThrows(NotSupportedException.class, () -> ArrowTypes.checkBatch(root));
        assertTrue(raw.getMessage().contains("'fruit' is dictionary-encoded"), raw.getMessage());
        assertEquals(new ArrowType.Utf8(), ArrowDictionaries.decoded(root.getSchema(), provider).getFields().get(0).getType());
        try (VectorSchemaRoot plain = ArrowDictionaries.decode(root, provider, a)) {
          assertFalse(ArrowDictionaries.encoded(plain.getSchema()));
          assertEquals(List.of(DataType.STRING, DataType.INT32), ArrowTypes.checkBatch(plain));
          VarCharVector fruit = (VarCharVector) plain.getVector("fruit");
          for (int i = 0; i < rows; i++) {
            assertEquals(expected.get(i), fruit.isNull(i) ? null : new String(fruit.get(i), StandardCharsets.UTF_8), "row " + i);
            assertEquals(i, ((IntVector) plain.getVector("qty")).get(i));
          }
        }
        UserException missing = assertThrows(UserException.class,
            () -> ArrowDictionaries.decode(root, new DictionaryProvider.MapDictionaryProvider(), a));
        assertTrue(missing.getMessage().contains("dictionary 7 did not come with the data"), missing.getMessage());
      }
    }
  }
}
