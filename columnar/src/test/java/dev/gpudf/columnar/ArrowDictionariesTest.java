package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.DictionaryColumn;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.junit.jupiter.api.Test;

/** Dictionary-encoded columns decode to their values; one that reaches the type mapping encoded is refused. */
class ArrowDictionariesTest {
  private static final String[] WORDS = {"apple", "pear", "фрукт 🍐", ""};

  @Test
  void encodedColumnsDecodeAndPlainOnesAreShared() {
    int rows = 1000;
    int[] codes = new int[rows];
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      codes[i] = i % 9 == 4 ? -1 : i % WORDS.length;
      expected.add(codes[i] < 0 ? null : WORDS[codes[i]]);
    }
    try (RootAllocator a = new RootAllocator(); DictionaryColumn fruit = DictionaryColumn.of(a, "fruit", 7, WORDS, codes)) {
      DictionaryProvider provider = fruit.provider();
      IntVector qty = new IntVector("qty", a);
      qty.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        qty.set(i, i);
      }
      qty.setValueCount(rows);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(fruit.codes(), qty))) {
        assertTrue(ArrowDictionaries.encoded(root.getSchema()));
        NotSupportedException raw = assertThrows(NotSupportedException.class, () -> ArrowTypes.checkBatch(root));
        assertTrue(raw.getMessage().contains("'fruit' is dictionary-encoded"), raw.getMessage());
        assertEquals(new ArrowType.Utf8(), ArrowDictionaries.decoded(root.getSchema(), provider).getFields().get(0).getType());
        try (VectorSchemaRoot plain = ArrowDictionaries.decode(root, provider, a)) {
          assertFalse(ArrowDictionaries.encoded(plain.getSchema()));
          assertEquals(List.of(DataType.STRING, DataType.INT32), ArrowTypes.checkBatch(plain));
          VarCharVector values = (VarCharVector) plain.getVector("fruit");
          for (int i = 0; i < rows; i++) {
            assertEquals(expected.get(i), values.isNull(i) ? null : new String(values.get(i), StandardCharsets.UTF_8), "row " + i);
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
