package dev.gpudf.sql.files;

import dev.gpudf.formats.ValueRange;
import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.UserException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One file of a Hive-partitioned table ({@code sales/year=2024/month=01/part-0.parquet}): its own
 * columns, then one column a {@code key=value} directory of its path, holding that value in every
 * row. A partition column is BIGINT when every file's value is an integer, DATE when every one is
 * a {@code yyyy-mm-dd} date, VARCHAR otherwise; {@code __HIVE_DEFAULT_PARTITION__} is NULL.
 */
public final class PartitionedSource implements ChunkSource {
  /** The value Hive writes for a NULL partition key. */
  static final String NULL_VALUE = "__HIVE_DEFAULT_PARTITION__";

  private final ChunkSource file;
  private final List<String> names = new ArrayList<>();
  private final List<DataType> types = new ArrayList<>();
  private final List<Object> values;

  private PartitionedSource(ChunkSource file, List<String> keys, List<DataType> keyTypes, List<Object> values) {
    this.file = file;
    this.values = values;
    names.addAll(file.names());
    types.addAll(file.types());
    for (int k = 0; k < keys.size(); k++) {
      if (names.stream().anyMatch(keys.get(k)::equalsIgnoreCase)) {
        throw new UserException("partition key '" + keys.get(k) + "' is also a column of the file");
      }
      names.add(keys.get(k));
      types.add(keyTypes.get(k));
    }
  }

  /** The {@code key=value} directories of {@code file} below {@code root}, in order. */
  static Map<String, String> keys(Path root, Path file) {
    Map<String, String> keys = new LinkedHashMap<>();
    Path rel = root.relativize(file).getParent();
    if (rel == null) {
      return keys;
    }
    for (Path part : rel) {
      String s = part.toString();
      int eq = s.indexOf('=');
      if (eq > 0) {
        String key = s.substring(0, eq);
        if (keys.put(key, java.net.URLDecoder.decode(s.substring(eq + 1), StandardCharsets.UTF_8)) != null) {
          throw new UserException(file + " names partition key '" + key + "' twice");
        }
      }
    }
    return keys;
  }

  /**
   * {@code files} (below {@code root}) with their partition columns, when their paths have
   * {@code key=value} directories; the sources are taken (closed here on failure). Every file must
   * name the same keys in the same order.
   */
  public static List<ChunkSource> of(Path root, List<Path> files, List<? extends ChunkSource> sources) {
    try {
      List<Map<String, String>> all = new ArrayList<>();
      for (Path f : files) {
        all.add(keys(root, f));
      }
      List<String> keys = new ArrayList<>(all.get(0).keySet());
      if (keys.isEmpty() && all.stream().allMatch(Map::isEmpty)) {
        return List.copyOf(sources);
      }
      for (int i = 0; i < files.size(); i++) {
        if (!new ArrayList<>(all.get(i).keySet()).equals(keys)) {
          throw new UserException(files.get(i) + " is partitioned by " + all.get(i).keySet() + " where " + files.get(0)
              + " is partitioned by " + keys);
        }
      }
      List<DataType> keyTypes = new ArrayList<>();
      for (String k : keys) {
        keyTypes.add(typeOf(all.stream().map(m -> m.get(k)).filter(v -> !v.equals(NULL_VALUE)).toList()));
      }
      List<ChunkSource> out = new ArrayList<>();
      for (int i = 0; i < files.size(); i++) {
        List<Object> values = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
          String v = all.get(i).get(keys.get(k));
          values.add(v.equals(NULL_VALUE) ? null : keyTypes.get(k).equals(DataType.INT64) ? (Object) Long.parseLong(v)
              : keyTypes.get(k).equals(DataType.DATE) ? (Object) (int) LocalDate.parse(v).toEpochDay() : v);
        }
        out.add(new PartitionedSource(sources.get(i), keys, keyTypes, values));
      }
      return out;
    } catch (RuntimeException e) {
      sources.forEach(ChunkSource::close);
      throw e;
    }
  }

  private static DataType typeOf(List<String> values) {
    if (!values.isEmpty() && values.stream().allMatch(v -> v.matches("-?\\d{1,18}"))) {
      return DataType.INT64;
    }
    if (!values.isEmpty() && values.stream().allMatch(v -> v.matches("\\d{4}-\\d{2}-\\d{2}") && parses(v))) {
      return DataType.DATE;
    }
    return DataType.STRING;
  }

  private static boolean parses(String date) {
    try {
      LocalDate.parse(date);
      return true;
    } catch (java.time.DateTimeException e) {
      return false;
    }
  }

  @Override
  public List<String> names() {
    return names;
  }

  @Override
  public List<DataType> types() {
    return types;
  }

  @Override
  public List<Integer> chunkRows() {
    return file.chunkRows();
  }

  @Override
  public void check(int chunk) {
    file.check(chunk);
  }

  @Override
  public VectorSchemaRoot read(int chunk, int[] columns, BufferAllocator allocator) {
    int own = file.names().size();
    int[] fromFile = java.util.Arrays.stream(columns).filter(c -> c < own).toArray();
    int rows = file.chunkRows().get(chunk);
    List<FieldVector> out = new ArrayList<>();
    try (VectorSchemaRoot read = file.read(chunk, fromFile, allocator)) {
      int next = 0;
      for (int c : columns) {
        if (c < own) {
          // moved, not copied: the read root gives its buffers up
          FieldVector v = read.getVector(next++);
          org.apache.arrow.vector.util.TransferPair t = v.getTransferPair(allocator);
          t.transfer();
          out.add((FieldVector) t.getTo());
        } else {
          out.add(constant(allocator, names.get(c), types.get(c), values.get(c - own), rows));
        }
      }
      VectorSchemaRoot root = new VectorSchemaRoot(out);
      root.setRowCount(rows);
      return root;
    } catch (RuntimeException e) {
      out.forEach(FieldVector::close);
      throw e;
    }
  }

  /** The file's own columns as the file gives them; a partition column is made on the host. */
  @Override
  public dev.gpudf.kernels.ParquetDecode.Chunk readEncoded(int chunk, int column, BufferAllocator allocator) {
    return column < file.names().size() ? file.readEncoded(chunk, column, allocator) : null;
  }

  /** A partition column's range is its one value; the file's own columns have what the file says. */
  @Override
  public ValueRange range(int chunk, int column) {
    int own = file.names().size();
    return column < own ? file.range(chunk, column) : ValueRange.constant((Comparable<?>) values.get(column - own));
  }

  private static FieldVector constant(BufferAllocator a, String name, DataType type, Object value, int rows) {
    FieldVector v = ArrowTypes.toArrowField(name, type).createVector(a);
    try {
      v.setInitialCapacity(rows);
      v.allocateNew();
      for (int r = 0; r < rows; r++) {
        if (value == null) {
          v.setNull(r);
        } else if (v instanceof BigIntVector b) {
          b.set(r, (Long) value);
        } else if (v instanceof DateDayVector d) {
          d.set(r, (Integer) value);
        } else {
          ((VarCharVector) v).setSafe(r, ((String) value).getBytes(StandardCharsets.UTF_8));
        }
      }
      v.setValueCount(rows);
      return v;
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }

  @Override
  public void close() {
    file.close();
  }
}
