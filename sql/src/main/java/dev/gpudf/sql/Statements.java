package dev.gpudf.sql;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlInsert;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlNodeList;
import org.apache.calcite.sql.ddl.SqlKeyConstraint;
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

  // CREATE [UNIQUE] INDEX and DROP INDEX, which Calcite's DDL grammar lacks
  private static final Pattern CREATE_INDEX = Pattern.compile(
      "\\s*CREATE\\s+(UNIQUE\\s+)?INDEX\\s+(IF\\s+NOT\\s+EXISTS\\s+)?(\\w+)\\s+ON\\s+(\\w+)\\s*\\(([\\w\\s,]+)\\)\\s*;?\\s*",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern DROP_INDEX = Pattern.compile("\\s*DROP\\s+INDEX\\s+(IF\\s+EXISTS\\s+)?(\\w+)\\s*;?\\s*",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  // a column declared "name TYPE PRIMARY KEY", which Calcite's grammar takes only as a table constraint
  // (possessive, from a word's start: linear in the statement, where a failed match once retried
  // every suffix of every word, quadratic on a long word)
  private static final Pattern INLINE_KEY = Pattern.compile(
      "\\b(\\w++)(\\s++\\w++(?:\\s*+\\(\\s*+\\d++(?:\\s*+,\\s*+\\d++)?\\s*+\\))?)\\s++PRIMARY\\s++KEY", Pattern.CASE_INSENSITIVE);

  /** Whether {@code sql} is an index statement (which returns no rows). */
  private static final Pattern COPY = Pattern.compile(
      "\\s*COPY\\s+(?:\\((.*)\\)|(\\w+))\\s+TO\\s+'((?:[^']|'')*)'\\s*(?:\\(\\s*FORMAT\\s+(\\w+)\\s*\\))?\\s*;?\\s*",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  // EXPLAIN after any blanks and comments, and the word after it (possessive: linear in the statement)
  private static final Pattern EXPLAIN = Pattern.compile(
      "^(?:\\s++|--[^\\n]*+|/\\*(?:[^*]|\\*(?!/))*+\\*/)*+(EXPLAIN)\\s++(\\w++)", Pattern.CASE_INSENSITIVE);

  /**
   * For {@code EXPLAIN query}, DuckDB's and PostgreSQL's form, which Calcite's grammar lacks: the
   * statement with the word EXPLAIN blanked out, so that positions in messages stay the user's;
   * else null ({@code EXPLAIN PLAN FOR query} is Calcite's own, and any other statement is not
   * one). EXPLAIN ANALYZE, which runs the query, is refused.
   */
  static String explainedQuery(String sql) {
    Matcher m = EXPLAIN.matcher(sql);
    if (!m.lookingAt()) {
      return null;
    }
    String next = m.group(2).toUpperCase(Locale.ROOT);
    if (next.equals("ANALYZE") || next.equals("ANALYSE")) {
      throw new NotSupportedException("EXPLAIN ANALYZE is not supported: EXPLAIN shows the plan, and the command line's"
          + " --timings where a query's time went");
    }
    return next.equals("PLAN") ? null : sql.substring(0, m.start(1)) + " ".repeat(m.end(1) - m.start(1)) + sql.substring(m.end(1));
  }

  /** Whether {@code sql} is {@code COPY (query) TO 'file' [(FORMAT f)]}, which Calcite's grammar lacks. */
  static boolean isCopy(String sql) {
    return sql.stripLeading().regionMatches(true, 0, "COPY", 0, 4);
  }

  /**
   * {@code COPY (query) TO 'file' [(FORMAT parquet|csv|arrow)]}, or {@code COPY table TO ...}:
   * the query's rows written to {@code file} inside the session's data directory (atomically; the
   * format from the option, else the file's extension); returns the rows written.
   */
  private static long copy(GpuSession session, String sql) {
    Matcher m = COPY.matcher(sql);
    if (!m.matches()) {
      throw new UserException("COPY takes the form COPY (query) TO 'file' [(FORMAT parquet|csv|arrow)], or COPY table TO ...");
    }
    java.nio.file.Path dir = session.catalog().dataDirectory();
    if (dir == null) {
      throw new UserException("COPY writes into the data directory of a session opened over one (path=DIR); this session has none");
    }
    String target = m.group(3).replace("''", "'");
    java.nio.file.Path file = dev.gpudf.sql.files.FileWriter.inside(dir, target);
    dev.gpudf.sql.files.FileWriter.Format format;
    if (m.group(4) != null) {
      try {
        format = dev.gpudf.sql.files.FileWriter.Format.valueOf(m.group(4).toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new UserException("COPY writes FORMAT parquet, csv or arrow, not " + m.group(4));
      }
    } else {
      format = dev.gpudf.sql.files.FileWriter.formatOf(file);
      if (format == null) {
        throw new UserException("COPY to '" + target + "': name the format (FORMAT parquet|csv|arrow) or use its extension");
      }
    }
    String query = m.group(1) != null ? m.group(1) : "SELECT * FROM " + m.group(2);
    try (VectorSchemaRoot rows = session.query(query)) {
      dev.gpudf.sql.files.FileWriter.write(rows, file, format, session.allocator());
      return rows.getRowCount();
    }
  }

  static boolean isIndexStatement(String sql) {
    return CREATE_INDEX.matcher(sql).matches() || DROP_INDEX.matcher(sql).matches();
  }

  private static final org.apache.calcite.sql.parser.SqlAbstractParserImpl.Metadata KEYWORDS =
      org.apache.calcite.sql.parser.ddl.SqlDdlParserImpl.FACTORY.getParser(new java.io.StringReader("")).getMetadata();
  private static final Pattern ENCOUNTERED = Pattern.compile("Encountered \"(\\w+)");

  /**
   * A parse failure as users read it: the parser's first line (where, and what it met) without its
   * list of every token it expected, and for a reserved word used as a name, how to use it anyway.
   */
  static UserException parseError(SqlParseException e, String sql) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof StackOverflowError) {
        return new UserException("the statement is nested too deeply to parse; simplify it", e);
      }
    }
    String first = e.getMessage() == null ? "a syntax error" : e.getMessage().lines().findFirst().orElse("").strip();
    if (first.startsWith("Non-query expression encountered in illegal context")) {
      // Calcite's words for a statement that starts with no command it knows ("SELEC 1")
      String word = sql.strip().split("[\\s(;]", 2)[0];
      return new UserException("unknown statement '" + word + "' at line 1, column 1: a statement starts with SELECT,"
          + " WITH, VALUES, EXPLAIN, INSERT, CREATE, DROP or COPY", e);
    }
    Matcher m = ENCOUNTERED.matcher(first);
    if (m.find() && KEYWORDS.isReservedWord(m.group(1).toUpperCase(Locale.ROOT))) {
      String word = m.group(1).toLowerCase(Locale.ROOT);
      first += " '" + word + "' is a reserved word: quote it (\"" + word + "\") to use it as a name.";
    }
    return new UserException(first, e);
  }

  static SqlNode parse(String sql) {
    StatementLimits.checkText(sql);
    try {
      // EXPLAIN query parses as the query (returnsRows tells them apart)
      String explained = explainedQuery(sql);
      return StatementLimits.check(SqlParser.create(explained != null ? explained : sql, GpuSession.PARSER).parseStmt());
    } catch (SqlParseException e) {
      int close = sql.lastIndexOf(')');
      Matcher inline = INLINE_KEY.matcher(sql);
      if (close > 0 && sql.stripLeading().regionMatches(true, 0, "CREATE", 0, 6) && inline.find()) {
        // the same table with the key as a table constraint; a second inline key stays an error
        String moved = sql.substring(0, inline.start()) + inline.group(1) + inline.group(2) + " NOT NULL"
            + sql.substring(inline.end(), close) + ", PRIMARY KEY (" + inline.group(1) + ")" + sql.substring(close);
        try {
          return StatementLimits.check(SqlParser.create(moved, GpuSession.PARSER).parseStmt());
        } catch (SqlParseException again) {
          throw parseError(e, sql);
        }
      }
      throw parseError(e, sql);
    } catch (StackOverflowError e) {
      throw new UserException("the statement is nested too deeply to parse; simplify it", e);
    }
  }

  private static final String RETURNS_ROWS = "the statement returns rows: run it as a query (JDBC executeQuery), not as an update";

  static long run(GpuSession session, String sql, List<Object> parameters) {
    StatementLimits.checkText(sql);
    if (isCopy(sql)) {
      if (!parameters.isEmpty()) {
        throw new UserException("COPY takes no parameters; this one was given " + parameters.size());
      }
      return copy(session, sql);
    }
    if (ShowStatements.matches(sql)) {
      throw new UserException(RETURNS_ROWS);
    }
    SqlNode statement = isIndexStatement(sql) ? null : parse(sql);
    if (statement instanceof SqlInsert insert) {
      return insert(session, insert, parameters);
    }
    if (!parameters.isEmpty()) {
      throw new UserException("only INSERT statements take parameters; this one was given " + parameters.size());
    }
    Matcher createIndex = CREATE_INDEX.matcher(sql);
    if (createIndex.matches()) {
      return createIndex(session, createIndex);
    }
    Matcher dropIndex = DROP_INDEX.matcher(sql);
    if (dropIndex.matches()) {
      String index = dropIndex.group(2).toLowerCase(Locale.ROOT);
      String table = session.catalog().dropIndex(index);
      if (table == null && dropIndex.group(1) == null) {
        throw new UserException("no index '" + index + "'");
      }
      if (table != null) {
        session.catalog().constrain(table, session.catalog().constraints(table).withoutKey("UNIQUE index " + index));
      }
      return 0;
    }
    SqlNode node = statement;
    if (node instanceof SqlCreateTable create) {
      return create(session, create);
    } else if (node instanceof SqlDropTable drop) {
      String name = simple(drop.name);
      if (!(drop.ifExists && !exists(session, name))) {
        session.catalog().drop(name);
      }
      return 0;
    }
    if (node.getKind().belongsTo(org.apache.calcite.sql.SqlKind.QUERY) || node.getKind() == org.apache.calcite.sql.SqlKind.EXPLAIN) {
      throw new UserException(RETURNS_ROWS);
    }
    throw new NotSupportedException(node.getKind() + " statements are not supported (only CREATE TABLE, INSERT, DROP TABLE)");
  }

  /**
   * An index changes no result here (every plan scans its columns), so it is recorded, not
   * built: its name is taken, and a UNIQUE index is checked now and on every later insert.
   */
  private static long createIndex(GpuSession session, Matcher m) {
    String index = m.group(3).toLowerCase(Locale.ROOT);
    String table = m.group(4).toLowerCase(Locale.ROOT);
    if (!exists(session, table)) {
      throw new UserException("no table '" + table + "'");
    }
    if (session.catalog().hasIndex(index)) {
      if (m.group(2) != null) {
        return 0;
      }
      throw new UserException("index '" + index + "' already exists");
    }
    List<String> columns = new ArrayList<>();
    List<String> existing = session.resultType("SELECT * FROM \"" + table + "\"").getFieldNames();
    for (String c : m.group(5).split(",")) {
      // an index column's ASC or DESC orders the index, which is not built
      String column = c.strip().toLowerCase(Locale.ROOT).replaceFirst("\\s+(asc|desc)$", "");
      if (!existing.contains(column)) {
        throw new UserException("table '" + table + "' has no column '" + column + "'");
      }
      columns.add(column);
    }
    if (m.group(1) != null) {
      TableConstraints more = session.catalog().constraints(table)
          .withKey(new TableConstraints.Key(columns, "UNIQUE index " + index));
      try (VectorSchemaRoot rows = session.query("SELECT * FROM \"" + table + "\"")) {
        more.check(table, rows);
      }
      // the name first: if it was taken meanwhile, the table's constraints stay as they were
      session.catalog().addIndex(index, table);
      session.catalog().constrain(table, more);
      return 0;
    }
    session.catalog().addIndex(index, table);
    return 0;
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
    TableConstraints constraints = TableConstraints.NONE;
    if (create.query != null) {
      if (create.columnList != null) {
        throw new NotSupportedException("CREATE TABLE with both a column list and AS query");
      }
      query = sql(create.query);
    } else if (create.columnList != null) {
      List<String> columns = new ArrayList<>();
      java.util.Set<String> notNull = new java.util.LinkedHashSet<>();
      List<TableConstraints.Key> keys = new ArrayList<>();
      java.util.Map<String, Integer> maxChars = new java.util.HashMap<>();
      for (SqlNode c : create.columnList) {
        if (c instanceof SqlKeyConstraint key) {
          List<String> keyColumns = new ArrayList<>();
          for (SqlNode k : (SqlNodeList) key.getOperandList().get(1)) {
            keyColumns.add(simple((SqlIdentifier) k).toLowerCase(Locale.ROOT));
          }
          boolean primary = key.getOperator().getKind() == org.apache.calcite.sql.SqlKind.PRIMARY_KEY;
          if (primary) {
            notNull.addAll(keyColumns);
          }
          keys.add(new TableConstraints.Key(keyColumns, (primary ? "PRIMARY KEY " : "UNIQUE constraint ") + keyColumns));
          continue;
        }
        if (!(c instanceof SqlColumnDeclaration column)) {
          throw new NotSupportedException(c.getKind() + " constraints are not supported (only PRIMARY KEY, UNIQUE and NOT NULL)");
        }
        if (column.strategy == org.apache.calcite.schema.ColumnStrategy.NOT_NULLABLE) {
          notNull.add(simple(column.name).toLowerCase(Locale.ROOT));
        }
        if (column.expression != null) {
          throw new NotSupportedException("column defaults are not supported: " + column.name);
        }
        if (column.dataType.getTypeNameSpec() instanceof org.apache.calcite.sql.SqlBasicTypeNameSpec basic
            && basic.getPrecision() >= 0 && (basic.getTypeName().getSimple().equalsIgnoreCase("VARCHAR")
                || basic.getTypeName().getSimple().equalsIgnoreCase("CHAR"))) {
          maxChars.put(simple(column.name).toLowerCase(Locale.ROOT), basic.getPrecision());
        }
        if (column.dataType.getTypeNameSpec() instanceof org.apache.calcite.sql.SqlUserDefinedTypeNameSpec named
            && !(named.getTypeName().isSimple()
                && GpuSession.TYPE_ALIASES.containsKey(named.getTypeName().getSimple().toUpperCase(Locale.ROOT)))) {
          org.apache.calcite.sql.parser.SqlParserPos p = column.dataType.getParserPosition();
          throw new UserException("unknown type name '" + named.getTypeName() + "' for column " + column.name + " at line "
              + p.getLineNum() + ", column " + p.getColumnNum());
        }
        columns.add("CAST(NULL AS " + sql(column.dataType) + ") AS \"" + simple(column.name) + "\"");
      }
      // no rows: the planner reduces the false filter to an empty VALUES of these types
      query = "SELECT " + String.join(", ", columns) + " FROM (VALUES (0)) AS \"none\"(\"x\") WHERE 1 = 0";
      for (TableConstraints.Key k : keys) {
        for (String c : k.columns()) {
          if (columns.stream().noneMatch(d -> d.endsWith(" AS \"" + c + "\""))) {
            throw new UserException(k.what() + " names no column of table '" + name + "'");
          }
        }
      }
      constraints = new TableConstraints(notNull, keys, maxChars);
    } else {
      throw new UserException("CREATE TABLE needs a column list or AS query");
    }
    try (VectorSchemaRoot rows = session.query(query)) {
      session.catalog().register(name, rows);
    }
    session.catalog().constrain(name, constraints);
    return 0;
  }

  /**
   * For an INSERT whose source is one VALUES row of {@code ?} markers and nothing else: the same
   * INSERT taking its rows from table {@code source} (its columns the markers' values, in order),
   * so that a batch of bound rows goes in as one statement; null for any other statement.
   */
  static String insertFrom(String sql, String source) {
    if (ShowStatements.matches(sql)) {
      return null;
    }
    SqlNode statement = isIndexStatement(sql) ? null : parse(sql);
    if (!(statement instanceof SqlInsert insert) || insert.getSource().getKind() != org.apache.calcite.sql.SqlKind.VALUES) {
      return null;
    }
    List<SqlNode> rows = ((SqlCall) insert.getSource()).getOperandList();
    if (rows.size() != 1 || !((SqlCall) rows.get(0)).getOperandList().stream()
        .allMatch(o -> o instanceof org.apache.calcite.sql.SqlDynamicParam)) {
      return null;
    }
    String columns = insert.getTargetColumnList() == null ? ""
        : " (" + String.join(", ", insert.getTargetColumnList().getList().stream().map(Statements::sql).toList()) + ")";
    return "INSERT INTO " + sql(insert.getTargetTable()) + columns + " SELECT * FROM \"" + source.replace("\"", "\"\"") + "\"";
  }

  /** The types of an INSERT's {@code ?} markers (a VALUES marker takes its column's type); none for other statements. */
  static List<RelDataType> parameterTypes(GpuSession session, String sql) {
    SqlNode statement = isIndexStatement(sql) || isCopy(sql) ? null : parse(FileFunctions.placeholders(sql));
    return statement instanceof SqlInsert insert ? session.parameterTypes(inserted(session, insert).added()) : List.of();
  }

  /** An INSERT's target, the query of the table's rows after it ({@code whole}), and that of the added rows alone. */
  private record Inserted(String table, String whole, String added) {}

  private static Inserted inserted(GpuSession session, SqlInsert insert) {
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
    List<RelDataType> targetTypes = targets.stream()
        .map(t -> fields.stream().filter(f -> f.getName().equals(t)).findFirst().orElseThrow().getType()).toList();
    String source = sql(typedValueParameters(insert.getSource(), targetTypes));
    List<RelDataTypeField> sourceFields = session.resultType(source).getFieldList();
    int width = sourceFields.size();
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
      // named as the table's columns: the added rows are checked and appended by name
      // a value of the column's type already is not cast: a cast evaluates an expression, which
      // does not hold DECIMALs past 18 digits
      boolean same = i >= 0 && sameType(sourceFields.get(i).getType(), f.getType());
      select.add((same ? aliases.get(i) : "CAST(" + (i < 0 ? "NULL" : aliases.get(i)) + " AS " + typeSql(f.getType()) + ")")
          + " AS \"" + f.getName().replace("\"", "\"\"") + "\"");
    }
    String added = "SELECT " + String.join(", ", select) + " FROM (" + source + ") AS src(" + String.join(", ", aliases) + ")";
    return new Inserted(name, "SELECT * FROM \"" + name + "\" UNION ALL " + added, added);
  }

  /**
   * {@code source} with each {@code ?} that stands alone in a VALUES row cast to its target
   * column's type: nothing else there tells the planner what type the value has.
   */
  private static SqlNode typedValueParameters(SqlNode source, List<RelDataType> types) {
    if (source.getKind() != org.apache.calcite.sql.SqlKind.VALUES) {
      return source;
    }
    for (SqlNode row : ((SqlCall) source).getOperandList()) {
      SqlCall r = (SqlCall) row;
      for (int i = 0; i < r.operandCount() && i < types.size(); i++) {
        if (r.operand(i) instanceof org.apache.calcite.sql.SqlDynamicParam) {
          try {
            r.setOperand(i, SqlParser.create("CAST(? AS " + typeSql(types.get(i)) + ")", GpuSession.PARSER).parseExpression());
          } catch (SqlParseException e) {
            throw new dev.gpudf.columnar.error.InternalException("cannot type a VALUES parameter: " + e.getMessage(), e);
          }
        }
      }
    }
    return source;
  }

  private static long insert(GpuSession session, SqlInsert insert, List<Object> parameters) {
    Inserted ins = inserted(session, insert);
    TableConstraints constraints = session.catalog().constraints(ins.table());
    if (constraints.keys().isEmpty()) {
      // nothing to compare with the rows already there: only the new rows are made, and appended
      try (VectorSchemaRoot rows = session.query(ins.added(), parameters)) {
        constraints.check(ins.table(), rows);
        session.catalog().append(ins.table(), rows);
        return rows.getRowCount();
      }
    }
    long before = session.catalog().shape(ins.table()).rows();
    try (VectorSchemaRoot rows = session.query(ins.whole(), parameters)) {
      constraints.check(ins.table(), rows);
      session.catalog().replace(ins.table(), rows);
      return rows.getRowCount() - before;
    }
  }

  /** {@code type} as SQL for a CAST; the planner's own type names, with precision where it matters. */
  /** Whether {@code a} and {@code b} are one type, NULLs allowed or not. */
  private static boolean sameType(RelDataType a, RelDataType b) {
    return a.getSqlTypeName() == b.getSqlTypeName() && a.getPrecision() == b.getPrecision() && a.getScale() == b.getScale()
        && a.getSqlTypeName() != org.apache.calcite.sql.type.SqlTypeName.CHAR;
  }

  private static String typeSql(RelDataType type) {
    return switch (type.getSqlTypeName()) {
      case DECIMAL -> "DECIMAL(" + type.getPrecision() + ", " + type.getScale() + ")";
      case CHAR, VARCHAR -> "VARCHAR";
      case TIMESTAMP -> "TIMESTAMP(" + type.getPrecision() + ")";
      // a zoned column (Arrow's timestamp with a zone)
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE -> "TIMESTAMP(" + type.getPrecision() + ") WITH LOCAL TIME ZONE";
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
