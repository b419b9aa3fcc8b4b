package dev.gpudf.columnar.testing;

import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * A dictionary-encoded string column as Arrow carries one (a pandas categorical, say): int32
 * codes, and a provider holding the dictionary of words. The caller closes this (the dictionary)
 * and, unless a root took it over, {@link #codes()}.
 */
public record DictionaryColumn(IntVector codes, DictionaryProvider.MapDictionaryProvider provider, VarCharVector words)
    implements AutoCloseable {
  /** Column {@code name} of dictionary {@code id} over {@code words}; a negative code is a NULL row. */
  public static DictionaryColumn of(BufferAllocator allocator, String name, long id, String[] words, int[] codes) {
    VarCharVector values = new VarCharVector(name + "_words", allocator);
    values.allocateNew();
    for (int i = 0; i < words.length; i++) {
      values.setSafe(i, words[i].getBytes(StandardCharsets.UTF_8));
    }
    values.setValueCount(words.length);
    DictionaryEncoding encoding = new DictionaryEncoding(id, false, new ArrowType.Int(32, true));
    IntVector column = new IntVector(name, new FieldType(true, new ArrowType.Int(32, true), encoding), allocator);
    column.allocateNew(codes.length);
    for (int i = 0; i < codes.length; i++) {
      if (codes[i] < 0) {
        column.setNull(i);
      } else {
        column.set(i, codes[i]);
      }
    }
    column.setValueCount(codes.length);
    return new DictionaryColumn(column, new DictionaryProvider.MapDictionaryProvider(new Dictionary(values, encoding)), values);
  }

  @Override
  public void close() {
    words.close();
  }
}
