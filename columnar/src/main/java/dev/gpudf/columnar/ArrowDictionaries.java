package dev.gpudf.columnar;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Dictionary-encoded Arrow columns (a pandas categorical sent by pyarrow, an Arrow IPC file with
 * dictionaries) decoded into plain ones where data comes in, since gpudf's columns hold values:
 * read as they are, their codes would pass for integers. {@link ArrowTypes#fromArrow} refuses an
 * encoded field that reaches it undecoded.
 */
public final class ArrowDictionaries {
  private ArrowDictionaries() {}

  /** Whether any column of {@code schema} is dictionary-encoded. */
  public static boolean encoded(Schema schema) {
    return schema.getFields().stream().anyMatch(f -> f.getDictionary() != null);
  }

  /** {@code schema} with each encoded column as its dictionary's values, of the dictionary's type. */
  public static Schema decoded(Schema schema, DictionaryProvider provider) {
    List<Field> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(f.getDictionary() == null ? f : new Field(f.getName(),
          new org.apache.arrow.vector.types.pojo.FieldType(f.isNullable(), dictionary(f, provider).getVectorType(), null,
              f.getMetadata()), List.of()));
    }
    return new Schema(fields, schema.getCustomMetadata());
  }

  /**
   * {@code root} with its encoded columns decoded (new vectors from {@code allocator}) and the
   * others sharing {@code root}'s buffers; the caller closes the result and keeps {@code root}.
   */
  public static VectorSchemaRoot decode(VectorSchemaRoot root, DictionaryProvider provider, BufferAllocator allocator) {
    List<FieldVector> vectors = new ArrayList<>();
    try {
      for (FieldVector v : root.getFieldVectors()) {
        if (v.getField().getDictionary() == null) {
          org.apache.arrow.vector.util.TransferPair share = v.getTransferPair(allocator);
          share.splitAndTransfer(0, root.getRowCount());
          vectors.add((FieldVector) share.getTo());
        } else {
          // the decoded vector carries the dictionary's name: it takes the column's
          try (FieldVector values = (FieldVector) DictionaryEncoder.decode(v, dictionary(v.getField(), provider), allocator)) {
            FieldVector named = new Field(v.getName(), new org.apache.arrow.vector.types.pojo.FieldType(
                v.getField().isNullable(), values.getField().getType(), null, v.getField().getMetadata()), List.of())
                .createVector(allocator);
            values.makeTransferPair(named).transfer();
            vectors.add(named);
          }
        }
      }
    } catch (RuntimeException e) {
      vectors.forEach(FieldVector::close);
      throw e;
    }
    VectorSchemaRoot out = new VectorSchemaRoot(vectors);
    out.setRowCount(root.getRowCount());
    return out;
  }

  private static Dictionary dictionary(Field f, DictionaryProvider provider) {
    long id = f.getDictionary().getId();
    Dictionary d = provider == null ? null : provider.lookup(id);
    if (d == null) {
      throw new UserException("column '" + f.getName() + "' is dictionary-encoded, and its dictionary " + id
          + " did not come with the data");
    }
    return d;
  }
}
