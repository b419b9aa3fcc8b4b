package dev.gpudf.sql;

import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * TPC-H tables from io.trino.tpch's generators as Arrow: money columns DECIMAL(15,2), keys BIGINT,
 * as the TPC-H schema has them. For a server or shell that starts with no data, and for tests
 * and benchmarks.
 */
public final class TpchTables {
  private TpchTables() {}

  /** One TPC-H table at {@code scale} (1.0 = SF1); the caller closes it. */
  public static <E extends TpchEntity> VectorSchemaRoot arrow(BufferAllocator a, TpchTable<E> table, double scale) {
    List<E> rows = new ArrayList<>();
    table.createGenerator(scale, 1, 1).forEach(rows::add);
    List<FieldVector> vectors = new ArrayList<>();
    for (TpchColumn<E> c : table.getColumns()) {
      String name = c.getColumnName();
      FieldVector v = switch (c.getType().getBase()) {
        case IDENTIFIER -> new BigIntVector(name, a);
        case INTEGER -> new IntVector(name, a);
        case DATE -> new DateDayVector(name, a);
        case DOUBLE -> new DecimalVector(name, a, 15, 2);
        case VARCHAR -> new VarCharVector(name, a);
      };
      v.setInitialCapacity(rows.size());
      v.allocateNew();
      for (int i = 0; i < rows.size(); i++) {
        E r = rows.get(i);
        switch (c.getType().getBase()) {
          case IDENTIFIER -> ((BigIntVector) v).setSafe(i, c.getIdentifier(r));
          case INTEGER -> ((IntVector) v).setSafe(i, c.getInteger(r));
          case DATE -> ((DateDayVector) v).setSafe(i, c.getDate(r));
          case DOUBLE -> ((DecimalVector) v).setSafe(i, BigDecimal.valueOf(c.getDouble(r)).setScale(2));
          case VARCHAR -> ((VarCharVector) v).setSafe(i, c.getString(r).getBytes(StandardCharsets.UTF_8));
        }
      }
      v.setValueCount(rows.size());
      vectors.add(v);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(rows.size());
    return root;
  }


  /** Registers all eight TPC-H tables at {@code scale} in {@code catalog} and returns their names. */
  public static List<String> loadAll(Catalog catalog, double scale, BufferAllocator allocator) {
    List<String> names = new ArrayList<>();
    for (TpchTable<?> t : TpchTable.getTables()) {
      try (VectorSchemaRoot root = arrow(allocator, t, scale)) {
        catalog.register(t.getTableName(), root);
      }
      names.add(t.getTableName());
    }
    return names;
  }
}
