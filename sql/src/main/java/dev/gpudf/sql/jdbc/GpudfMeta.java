package dev.gpudf.sql.jdbc;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.Cancellation;
import dev.gpudf.sql.FileTables;
import dev.gpudf.sql.GpuSession;
import java.nio.file.Path;
import java.sql.DatabaseMetaData;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.avatica.AvaticaConnection;
import org.apache.calcite.avatica.AvaticaParameter;
import org.apache.calcite.avatica.AvaticaStatement;
import org.apache.calcite.avatica.ColumnMetaData;
import org.apache.calcite.avatica.MetaImpl;
import org.apache.calcite.avatica.NoSuchStatementException;
import org.apache.calcite.avatica.QueryState;
import org.apache.calcite.avatica.remote.TypedValue;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeField;
import org.apache.calcite.sql.type.SqlTypeName;

/**
 * Avatica's view of one gpudf connection: opens the connection's session (and its allocator and
 * GPU) and closes them with the connection. A query's whole result travels in its first frame.
 * Queries return rows; CREATE TABLE, INSERT and DROP TABLE return update counts. Prepared
 * queries take {@code ?} parameters in expressions; batches are refused with {@link NotSupportedException}.
 */
final class GpudfMeta extends MetaImpl {
  private RootAllocator allocator;
  private Gpu gpu;
  private GpuSession session;
  // a session named by session= belongs to whoever opened it, not to this connection
  private boolean borrowed;
  private final Map<Integer, Signature> prepared = new java.util.concurrent.ConcurrentHashMap<>();

  GpudfMeta(AvaticaConnection connection) {
    super(connection);
  }

  @Override
  public synchronized void openConnection(ConnectionHandle ch, Map<String, String> info) {
    String shared = info.get("session");
    if (shared != null) {
      if (info.containsKey("path") || info.containsKey("backend")) {
        throw new UserException("session= names an open session; it takes no path or backend");
      }
      session = GpuSession.byJdbcId(shared);
      borrowed = true;
      return;
    }
    boolean useGpu = GpuSession.usesGpu(info.getOrDefault("backend", "auto"));
    allocator = new RootAllocator();
    try {
      gpu = useGpu ? Gpu.open(0) : null;
      session = useGpu ? GpuSession.gpu(gpu, allocator) : GpuSession.cpu(allocator);
      String path = info.get("path");
      if (path != null) {
        FileTables.loadDirectory(session.catalog(), Path.of(path), allocator);
      }
    } catch (RuntimeException e) {
      closeConnection(ch);
      throw e;
    }
  }

  @Override
  public synchronized void closeConnection(ConnectionHandle ch) {
    if (borrowed) {
      session = null;
      return;
    }
    try (RootAllocator a = allocator; Gpu g = gpu; GpuSession s = session) {
      session = null;
      gpu = null;
      allocator = null;
    }
  }

  private synchronized GpuSession session() {
    if (session == null) {
      throw new UserException("the connection is closed");
    }
    return session;
  }

  @Override
  public StatementHandle prepare(ConnectionHandle ch, String sql, long maxRowCount) {
    StatementHandle h = createStatement(ch);
    h.signature = session().returnsRows(sql) ? signature(sql, session().resultType(sql)) : updateSignature(sql);
    prepared.put(h.id, h.signature);
    return h;
  }

  @Override
  public ExecuteResult prepareAndExecute(StatementHandle h, String sql, long maxRowCount, PrepareCallback callback)
      throws NoSuchStatementException {
    return prepareAndExecute(h, sql, maxRowCount, -1, callback);
  }

  @Override
  public ExecuteResult prepareAndExecute(StatementHandle h, String sql, long maxRowCount, int maxRowsInFirstFrame,
      PrepareCallback callback) throws NoSuchStatementException {
    try {
      if (!session().returnsRows(sql)) {
        h.signature = updateSignature(sql);
        long count = session().update(sql);
        synchronized (callback.getMonitor()) {
          callback.clear();
          callback.assign(h.signature, null, count);
        }
        callback.execute();
        return new ExecuteResult(List.of(MetaResultSet.count(h.connectionId, h.id, count)));
      }
      h.signature = signature(sql, session().resultType(sql));
      Frame frame = run(h, sql, List.of(), maxRowCount);
      synchronized (callback.getMonitor()) {
        callback.clear();
        callback.assign(h.signature, frame, -1);
      }
      callback.execute();
      return new ExecuteResult(List.of(MetaResultSet.create(h.connectionId, h.id, false, h.signature, frame)));
    } catch (java.sql.SQLException e) {
      throw new UserException(e.getMessage(), e);
    }
  }

  @Override
  public ExecuteResult execute(StatementHandle h, List<TypedValue> parameterValues, long maxRowCount) {
    return execute(h, parameterValues, (int) Math.min(maxRowCount, Integer.MAX_VALUE));
  }

  @Override
  public ExecuteResult execute(StatementHandle h, List<TypedValue> parameterValues, int maxRowsInFirstFrame) {
    List<Object> values = new ArrayList<>();
    if (parameterValues != null) {
      // TypedValue keeps Avatica's local form (a DATE as its day number), which Calcite's literals take
      parameterValues.forEach(v -> values.add(v == null ? null : v.value));
    }
    // Avatica hands some executions a handle without its signature; the prepared one is kept here
    Signature signature = h.signature != null ? h.signature : prepared.get(h.id);
    if (signature == null) {
      throw new UserException("statement " + h.id + " was not prepared");
    }
    if (signature.statementType == StatementType.OTHER_DDL) {
      if (!values.isEmpty()) {
        throw new NotSupportedException("parameters in DDL and DML statements are not supported");
      }
      return new ExecuteResult(List.of(MetaResultSet.count(h.connectionId, h.id, session().update(signature.sql))));
    }
    Frame frame = run(h, signature.sql, values, maxRows(h));
    return new ExecuteResult(List.of(MetaResultSet.create(h.connectionId, h.id, false, signature, frame)));
  }

  /** The statement's current {@code setMaxRows} limit, which Avatica passes to prepare but not to execute. */
  private long maxRows(StatementHandle h) {
    AvaticaStatement statement = connection.statementMap.get(h.id);
    try {
      return statement == null ? -1 : statement.getLargeMaxRows();
    } catch (java.sql.SQLException e) {
      throw new UserException(e.getMessage(), e);
    }
  }

  /** A DDL or DML statement: no columns, an update count. */
  private static Signature updateSignature(String sql) {
    return Signature.create(List.of(), sql, List.of(), CursorFactory.ARRAY, StatementType.OTHER_DDL);
  }

  private Signature signature(String sql, RelDataType type) {
    List<AvaticaParameter> parameters = new ArrayList<>();
    for (RelDataType p : session().parameterTypes(sql)) {
      SqlTypeName name = p.getSqlTypeName();
      parameters.add(new AvaticaParameter(SqlTypeName.NUMERIC_TYPES.contains(name),
          Math.max(p.getPrecision(), 0), Math.max(p.getScale(), 0), name.getJdbcOrdinal(), name.getName(),
          Object.class.getName(), "?" + (parameters.size() + 1)));
    }
    return Signature.create(ArrowRows.columns(type), sql, parameters, CursorFactory.ARRAY, StatementType.SELECT);
  }

  /**
   * Runs {@code sql} for statement {@code h}: JDBC's {@code Statement.cancel} (Avatica's cancel
   * flag) stops it at its next operator, and {@code setQueryTimeout} is its time limit. Avatica
   * never clears the flag: each execution starts it afresh, so one cancel stops one execution.
   */
  private Frame run(StatementHandle h, String sql, List<Object> parameters, long maxRowCount) {
    GpuSession s = session();
    RelDataType type = s.resultType(sql);
    java.util.concurrent.atomic.AtomicBoolean cancelled;
    int timeout;
    try {
      cancelled = connection.getCancelFlag(h);
      cancelled.set(false);
      AvaticaStatement statement = connection.statementMap.get(h.id);
      timeout = statement == null ? 0 : statement.getQueryTimeout();
    } catch (java.sql.SQLException | NoSuchStatementException e) {
      throw new UserException(e.getMessage(), e);
    }
    Cancellation cancellation = Cancellation.following(cancelled::get, timeout);
    try (VectorSchemaRoot result = s.query(sql, parameters, timings -> { }, cancellation)) {
      return Frame.create(0, true, ArrowRows.rows(result, type, maxRowCount));
    }
  }

  @Override
  public ExecuteBatchResult prepareAndExecuteBatch(StatementHandle h, List<String> sqlCommands) {
    throw new NotSupportedException("batches are not supported");
  }

  @Override
  public ExecuteBatchResult executeBatch(StatementHandle h, List<List<TypedValue>> parameterValues) {
    throw new NotSupportedException("batches are not supported");
  }

  @Override
  public Frame fetch(StatementHandle h, long offset, int fetchMaxRowCount) {
    // every result is complete in its first frame (done = true), so Avatica never asks for more
    throw new NotSupportedException("fetching beyond the first frame is not supported");
  }

  @Override
  public void closeStatement(StatementHandle h) {
    // a statement's plan lives in the session's plan cache; only its signature is ours
    prepared.remove(h.id);
  }

  @Override
  public boolean syncResults(StatementHandle sh, QueryState state, long offset) {
    return false;
  }

  @Override
  public void commit(ConnectionHandle ch) {
    // read-only: there is nothing to commit
  }

  @Override
  public void rollback(ConnectionHandle ch) {
    // read-only: there is nothing to roll back
  }

  @Override
  public MetaResultSet getTables(ConnectionHandle ch, String catalog, Pat schemaPattern, Pat tableNamePattern,
      List<String> typeList) {
    List<Object> rows = new ArrayList<>();
    if (typeList == null || typeList.contains("TABLE")) {
      for (String name : matching(tableNamePattern)) {
        rows.add(new MetaTable(null, null, name, "TABLE"));
      }
    }
    return result(MetaTable.class, rows);
  }

  @Override
  public MetaResultSet getColumns(ConnectionHandle ch, String catalog, Pat schemaPattern, Pat tableNamePattern,
      Pat columnNamePattern) {
    List<Object> rows = new ArrayList<>();
    Pattern columns = like(columnNamePattern);
    for (String table : matching(tableNamePattern)) {
      for (RelDataTypeField f : session().resultType("SELECT * FROM \"" + table + "\"").getFieldList()) {
        if (!columns.matcher(f.getName()).matches()) {
          continue;
        }
        RelDataType t = f.getType();
        Integer precision = t.getPrecision() == RelDataType.PRECISION_NOT_SPECIFIED ? null : t.getPrecision();
        Integer scale = t.getScale() == RelDataType.SCALE_NOT_SPECIFIED ? null : t.getScale();
        boolean nullable = t.isNullable();
        rows.add(new MetaColumn(null, null, table, f.getName(), t.getSqlTypeName().getJdbcOrdinal(),
            t.getSqlTypeName().getName(), precision, scale, 10,
            nullable ? DatabaseMetaData.columnNullable : DatabaseMetaData.columnNoNulls, null,
            f.getIndex() + 1, nullable ? "YES" : "NO"));
      }
    }
    return result(MetaColumn.class, rows);
  }

  /** The SQL types a gpudf column can have, with their largest precision. */
  @Override
  public MetaResultSet getTypeInfo(ConnectionHandle ch) {
    List<Object> rows = new ArrayList<>();
    short nullable = (short) DatabaseMetaData.typeNullable;
    short searchable = (short) DatabaseMetaData.typeSearchable;
    Object[][] types = {
      {"BOOLEAN", java.sql.Types.BOOLEAN, 1, null},
      {"TINYINT", java.sql.Types.TINYINT, 3, 10},
      {"SMALLINT", java.sql.Types.SMALLINT, 5, 10},
      {"INTEGER", java.sql.Types.INTEGER, 10, 10},
      {"BIGINT", java.sql.Types.BIGINT, 19, 10},
      {"REAL", java.sql.Types.REAL, 7, 2},
      {"DOUBLE", java.sql.Types.DOUBLE, 15, 2},
      {"DECIMAL", java.sql.Types.DECIMAL, 38, 10},
      {"DATE", java.sql.Types.DATE, 10, null},
      {"TIMESTAMP", java.sql.Types.TIMESTAMP, 29, null},
      {"VARCHAR", java.sql.Types.VARCHAR, Integer.MAX_VALUE, null}};
    for (Object[] t : types) {
      boolean text = t[0].equals("VARCHAR");
      boolean dated = t[0].equals("DATE") || t[0].equals("TIMESTAMP");
      rows.add(new MetaTypeInfo((String) t[0], (Integer) t[1], (Integer) t[2], text ? "'" : dated ? t[0] + " '" : null,
          text || dated ? "'" : null, nullable, text, searchable, false, t[0].equals("DECIMAL"), false,
          (short) 0, (short) (t[0].equals("DECIMAL") ? 38 : 0), t[3] == null ? 0 : (Integer) t[3]));
    }
    return result(MetaTypeInfo.class, rows);
  }

  private List<String> matching(Pat tableNamePattern) {
    Pattern p = like(tableNamePattern);
    return session().catalog().names().stream().filter(n -> p.matcher(n).matches()).toList();
  }

  /** A JDBC metadata pattern ({@code %} any run, {@code _} one character, {@code \} escapes, null for all) as a regex. */
  private static Pattern like(Pat pat) {
    if (pat == null || pat.s == null) {
      return Pattern.compile(".*", Pattern.DOTALL);
    }
    StringBuilder re = new StringBuilder();
    String s = pat.s;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        re.append(Pattern.quote(String.valueOf(s.charAt(++i))));
      } else {
        re.append(c == '%' ? ".*" : c == '_' ? "." : Pattern.quote(String.valueOf(c)));
      }
    }
    return Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  }

  /** Avatica's metadata rows (public fields, in declaration order, as {@code fieldMetaData} lists them) as arrays. */
  private MetaResultSet result(Class<?> rowClass, List<Object> rows) {
    List<java.lang.reflect.Field> fields = java.util.Arrays.stream(rowClass.getFields())
        .filter(f -> !java.lang.reflect.Modifier.isStatic(f.getModifiers())).toList();
    List<Object> arrays = new ArrayList<>(rows.size());
    for (Object row : rows) {
      Object[] values = new Object[fields.size()];
      for (int i = 0; i < values.length; i++) {
        try {
          values[i] = fields.get(i).get(row);
        } catch (IllegalAccessException e) {
          throw new dev.gpudf.columnar.error.InternalException("cannot read metadata field " + fields.get(i), e);
        }
      }
      arrays.add(values);
    }
    List<ColumnMetaData> columns = fieldMetaData(rowClass).columns;
    return createResultSet(Map.of(), columns, CursorFactory.ARRAY, Frame.create(0, true, arrays));
  }
}
