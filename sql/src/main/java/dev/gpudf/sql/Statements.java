package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlInsert;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.ddl.SqlColumnDeclaration;
import org.apache.calcite.sql.ddl.SqlCreateTable;
import org.apache.calcite.sql.ddl.SqlDropTable;
import org.apache.calcite.sql.dialect.CalciteSqlDialect;
import org.apache.calcite.sql.parser.SqlParseException;
import org.apache.calcite.sql.parser.SqlParser;

/**
 * DDL and DML over the session's catalog. Each statement is rewritten into a query the planner
 * already runs (an empty typed {@code SELECT} for a column list, {@code UNION ALL} for an insert)
 * and its result replaces the table, so inserts are type-checked and cast like any query.
 */
final class Statements {
  private Statements() {}

  static SqlNode parse(String sql) {
    try {
      return SqlParser.create(sql, GpuSession.PARSER).parseStmt();
    } catch (SqlParseException e) {
      throw new UserException(e.getMessage(), e);
    }
  }

  static long run(GpuSession session, String sql) {
    SqlNode node = parse(sql);
    if (node instanceof SqlCreateTable create) {
      return create(session, create);
    } else if (node instanceof SqlDropTable drop) {
      String name = simple(drop.name);
      if (!(drop.ifExists && !exists(session, name))) {
        session.catalog().drop(name);
      }
      return 0;
    } else if (node instanceof SqlInsert insert) {
      return insert(session, insert);
    }
    throw new NotSupportedException(node.getKind() + " statements are not supported (only CREATE TABLE, INSERT, DROP TABLE)");
  }

  private static long create(GpuSession session, SqlCreateTable create) {
    String name = simple(create.name);
    if (exists(session, name)) {
      if (create.ifNotExists) {
        return 0;
      }
      throw new UserException("table '" + name + "' already exists");
    }
    String query;
    if (create.query != null) {
      if (create.columnList != null) {
        throw new NotSupportedException("CREATE TABLE with both a column list and AS query");
      }
      query = sql(create.query);
    } else if (create.columnList != null) {
      List<String> columns = new ArrayList<>();
      for (SqlNode c : create.columnList) {
        if (!(c instanceof SqlColumnDeclaration column)) {
          throw new NotSupportedException("table constraints are not supported: " + c);
        }
        if (column.strategy == org.apache.calcite.schema.ColumnStrategy.NOT_NULLABLE) {
          // refused rather than ignored: inserts do not check it yet
          throw new NotSupportedException("NOT NULL columns are not supported yet: " + column.name);
        }
        if (column.expression != null) {
          throw new NotSupportedException("column defaults are not supported: " + column.name);
        }
        columns.add("CAST(NULL AS " + column.dataType + ") AS \"" + simple(column.name) + "\"");
      }
      // no rows: the planner reduces the false filter to an empty VALUES of these types
      query = "SELECT " + String.join(", ", columns) + " FROM (VALUES (0)) AS \"none\"(\"x\") WHERE 1 = 0";
    } else {
      throw new UserException("CREATE TABLE needs a column list or AS query");
    }
    try (VectorSchemaRoot rows = session.query(query)) {
      session.catalog().register(name, rows);
    }
    return 0;
  }

  private static long insert(GpuSession session, SqlInsert insert) {
    if (!(insert.getTargetTable() instanceof SqlIdentifier target)) {
      throw new NotSupportedException("INSERT into " + insert.getTargetTable());
    }
    String name = simple(target);
    if (!exists(session, name)) {
      throw new UserException("no table '" + name + "'");
    }
    List<RelDataTypeField> fields = session.resultType("SELECT * FROM \"" + name + "\"").getFieldList();
    List<String> targets = new ArrayList<>();
    if (insert.getTargetColumnList() == null) {
      fields.forEach(f -> targets.add(f.getName()));
    } else {
      for (SqlNode c : insert.getTargetColumnList()) {
        String column = simple((SqlIdentifier) c);
        if (fields.stream().noneMatch(f -> f.getName().equals(column))) {
          throw new UserException("table '" + name + "' has no column '" + column + "'");
        }
        targets.add(column);
      }
    }
    String source = sql(insert.getSource());
    int width = session.resultType(source).getFieldCount();
    if (width != targets.size()) {
      throw new UserException("INSERT INTO " + name + " gives " + width + " values for " + targets.size() + " columns");
    }
    List<String> aliases = new ArrayList<>();
    for (int i = 0; i < width; i++) {
      aliases.add("\"s" + i + "\"");
    }
    List<String> select = new ArrayList<>();
    for (RelDataTypeField f : fields) {
      int i = targets.indexOf(f.getName());
      select.add("CAST(" + (i < 0 ? "NULL" : aliases.get(i)) + " AS " + typeSql(f.getType()) + ")");
    }
    String added = "SELECT " + String.join(", ", select) + " FROM (" + source + ") AS src(" + String.join(", ", aliases) + ")";
    long before;
    try (Table<?> t = session.catalog().acquire(name)) {
      before = t.rowCount();
    }
    try (VectorSchemaRoot rows = session.query("SELECT * FROM \"" + name + "\" UNION ALL " + added)) {
      session.catalog().replace(name, rows);
      return rows.getRowCount() - before;
    }
  }

  /** {@code type} as SQL for a CAST; the planner's own type names, with precision where it matters. */
  private static String typeSql(RelDataType type) {
    return switch (type.getSqlTypeName()) {
      case DECIMAL -> "DECIMAL(" + type.getPrecision() + ", " + type.getScale() + ")";
      case CHAR, VARCHAR -> "VARCHAR";
      case TIMESTAMP -> "TIMESTAMP(" + type.getPrecision() + ")";
      default -> type.getSqlTypeName().getName();
    };
  }

  private static boolean exists(GpuSession session, String name) {
    return session.catalog().names().contains(name.toLowerCase(Locale.ROOT));
  }

  private static String simple(SqlIdentifier id) {
    if (!id.isSimple()) {
      throw new NotSupportedException("qualified table names are not supported: " + id);
    }
    return id.getSimple();
  }

  private static String sql(SqlNode node) {
    return node.toSqlString(CalciteSqlDialect.DEFAULT).getSql();
  }
}
