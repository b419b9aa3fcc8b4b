package dev.gpudf.sql;

import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
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
 * TPC-H data from io.trino.tpch's generators, as Arrow tables for gpudf and as the same rows in
 * DuckDB. Money columns are DECIMAL(15,2), keys BIGINT, as the TPC-H schema has them.
 */
final class TpchData {
  private TpchData() {}

  static <E extends TpchEntity> VectorSchemaRoot arrow(BufferAllocator a, TpchTable<E> table, double scale) {
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

  static <E extends TpchEntity> void duckdb(Connection conn, TpchTable<E> table, double scale) throws SQLException {
    List<String> defs = new ArrayList<>();
    for (TpchColumn<E> c : table.getColumns()) {
      defs.add(c.getColumnName() + " " + switch (c.getType().getBase()) {
        case IDENTIFIER -> "BIGINT";
        case INTEGER -> "INTEGER";
        case DATE -> "DATE";
        case DOUBLE -> "DECIMAL(15,2)";
        case VARCHAR -> "VARCHAR";
      });
    }
    try (Statement s = conn.createStatement()) {
      s.execute("CREATE TABLE " + table.getTableName() + " (" + String.join(", ", defs) + ")");
    }
    String marks = String.join(", ", java.util.Collections.nCopies(defs.size(), "?"));
    try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + table.getTableName() + " VALUES (" + marks + ")")) {
      int n = 0;
      for (E r : table.createGenerator(scale, 1, 1)) {
        int k = 1;
        for (TpchColumn<E> c : table.getColumns()) {
          switch (c.getType().getBase()) {
            case IDENTIFIER -> ps.setLong(k, c.getIdentifier(r));
            case INTEGER -> ps.setInt(k, c.getInteger(r));
            case DATE -> ps.setObject(k, LocalDate.ofEpochDay(c.getDate(r)));
            case DOUBLE -> ps.setBigDecimal(k, BigDecimal.valueOf(c.getDouble(r)).setScale(2));
            case VARCHAR -> ps.setString(k, c.getString(r));
          }
          k++;
        }
        ps.addBatch();
        if (++n % 10_000 == 0) {
          ps.executeBatch();
        }
      }
      ps.executeBatch();
    }
  }
}
