package dev.gpudf.sql;

import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

/** The rows of {@link TpchTables} in DuckDB, for comparing answers. */
final class TpchData {
  private TpchData() {}

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
