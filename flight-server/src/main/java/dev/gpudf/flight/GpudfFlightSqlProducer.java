package dev.gpudf.flight;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.gpudf.sql.GpuSession;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.BasicFlightSqlProducer;
import org.apache.arrow.flight.sql.FlightSqlUtils;
import org.apache.arrow.flight.sql.SqlInfoBuilder;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.flight.sql.impl.FlightSql.ActionClosePreparedStatementRequest;
import org.apache.arrow.flight.sql.impl.FlightSql.ActionCreatePreparedStatementRequest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetDbSchemas;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetSqlInfo;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetTables;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetXdbcTypeInfo;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandPreparedStatementQuery;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandPreparedStatementUpdate;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementQuery;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementUpdate;
import org.apache.arrow.flight.sql.impl.FlightSql.TicketStatementQuery;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Flight SQL face of a {@link GpuSession}: ad-hoc and prepared queries (result schemas known
 * when a statement is prepared, {@code ?} parameters bound by DoPut), updates (DDL, INSERT),
 * bulk ingest into tables, the catalog calls (tables with their schemas, table types, SQL info,
 * type info; no catalogs or schemas, since tables are named without them; keys answered empty),
 * and cancellation of statements not yet streamed. Results stream in batches of
 * {@link ResultSender#BATCH_ROWS} rows with backpressure. Every failure reaches the client as a
 * Flight status ({@link Statuses}); the server keeps running.
 *
 * <p>Statement handles live in this producer: an ad-hoc query until its stream is fetched or
 * cancelled, a prepared statement until the client closes it.
 */
public final class GpudfFlightSqlProducer extends BasicFlightSqlProducer {
  private final GpuSession session;
  private final BufferAllocator allocator;
  private final DataDirectory dataDirectory;
  private final DeviceExports exports;
  private final DeviceImports imports;
  private final ProducerMappings producerMappings = new ProducerMappings();
  private final Users users;
  private final Handles<String> statements = new Handles<>("statement");
  private final Handles<Prepared> prepared = new Handles<>("prepared statement");
  /** Queries running now, by the handle of their statement, so a client can cancel them. */
  private final java.util.Map<ByteString, Running> running = new java.util.concurrent.ConcurrentHashMap<>();

  private record Running(String owner, dev.gpudf.sql.Cancellation cancellation) {}
  /** Set once the server closes: streams and queries in flight end at their next check. */
  private volatile boolean closing;
  private final ResultSender sender;
  private final SqlInfoBuilder sqlInfo = new SqlInfoBuilder()
      .withFlightSqlServerName("gpudf")
      .withFlightSqlServerVersion("0.1.0-SNAPSHOT")
      .withFlightSqlServerArrowVersion("18.3.0")
      .withFlightSqlServerReadOnly(false)
      .withFlightSqlServerSql(true)
      .withFlightSqlServerSubstrait(false)
      .withFlightSqlServerTransaction(FlightSql.SqlSupportedTransaction.SQL_SUPPORTED_TRANSACTION_NONE)
      .withFlightSqlServerCancel(true)
      .withSqlIdentifierQuoteChar("\"")
      .withSqlIdentifierCase(FlightSql.SqlSupportedCaseSensitivity.SQL_CASE_SENSITIVITY_LOWERCASE)
      .withSqlQuotedIdentifierCase(FlightSql.SqlSupportedCaseSensitivity.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE);

  /** A prepared statement: its text, result and parameter schemas, and the parameters last bound. */
  private static final class Prepared {
    final String sql;
    final boolean query;
    final Schema dataset;
    final Schema parameters;
    volatile List<Object> values = List.of();

    Prepared(String sql, boolean query, Schema dataset, Schema parameters) {
      this.sql = sql;
      this.query = query;
      this.dataset = dataset;
      this.parameters = parameters;
    }
  }

  /**
   * Serves {@code session}; result batches come from {@code allocator}. Neither is closed by the
   * producer. With a {@code dataDirectory} (the one the session's tables were loaded from; may be
   * null), every change to a table is written back there ({@link DataDirectory}). With {@code users}
   * (may be null: a server without logins, where anyone may change tables), a user whose role is
   * read-only is refused every statement that changes tables or writes files.
   */
  public GpudfFlightSqlProducer(GpuSession session, BufferAllocator allocator, java.nio.file.Path dataDirectory,
      Users users) {
    this.session = session;
    this.allocator = allocator;
    this.sender = new ResultSender(allocator, () -> closing);
    this.dataDirectory = dataDirectory == null ? null : new DataDirectory(dataDirectory, session);
    this.exports = new DeviceExports(session);
    this.imports = new DeviceImports(session, producerMappings);
    this.users = users;
  }

  /** UNAUTHORIZED (gRPC PERMISSION_DENIED) unless the caller may change tables. */
  private void mayWrite(CallContext context, String what) {
    if (users != null && users.role(user(context)) != Users.Role.WRITE) {
      throw CallStatus.UNAUTHORIZED.withDescription("user '" + user(context) + "' may read tables only, not " + what)
          .toRuntimeException();
    }
  }

  /** Flight SQL's actions, and the device hand-off's ({@link DeviceHandOff}). */
  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    switch (action.getType()) {
      case DeviceHandOff.EXPORT -> Statuses.action(listener, () -> listener.onNext(new Result(exports.export(action.getBody()))));
      case DeviceHandOff.RELEASE -> Statuses.action(listener, () -> exports.release(action.getBody()));
      case DeviceHandOff.IMPORT -> Statuses.action(listener, () -> {
        mayWrite(context, "import tables");
        DeviceHandOff.ImportResult done = changing(() -> imports.ingest(action.getBody()));
        listener.onNext(new Result(DeviceHandOff.JSON.writeValueAsBytes(done)));
      });
      case DeviceHandOff.UNMAP -> Statuses.action(listener,
          () -> listener.onNext(new Result(DeviceHandOff.JSON.writeValueAsBytes(imports.unmap(action.getBody())))));
      default -> super.doAction(context, action, listener);
    }
  }

  @Override
  public void listActions(CallContext context, StreamListener<ActionType> listener) {
    for (ActionType t : FlightSqlUtils.FLIGHT_SQL_ACTIONS) {
      listener.onNext(t);
    }
    listener.onNext(new ActionType(DeviceHandOff.EXPORT,
        "run a query and export its device-resident result as CUDA IPC handles under a lease (JSON in and out)"));
    listener.onNext(new ActionType(DeviceHandOff.RELEASE, "end a device hand-off lease (body: the lease id)"));
    listener.onNext(new ActionType(DeviceHandOff.IMPORT,
        "make a table of another process's device memory, given as CUDA IPC handles (JSON in and out)"));
    listener.onNext(new ActionType(DeviceHandOff.UNMAP,
        "stop keeping mapped the producer allocations that imports asked to keep (JSON in and out)"));
    listener.onCompleted();
  }

  /** Device hand-off leases held now (for tests and monitoring). */
  public int deviceLeases() {
    return exports.leases();
  }

  /** Runs an update, ingest or import, writes what it changed to the data directory, and returns its answer. */
  private <T> T changing(java.util.function.Supplier<T> update) {
    T rows = update.get();
    if (dataDirectory != null) {
      dataDirectory.sync(session);
    }
    return rows;
  }

  /** Statements awaiting their stream plus open prepared statements (for tests and monitoring). */
  public int openHandles() {
    return statements.size() + prepared.size();
  }

  @Override
  protected <T extends Message> List<FlightEndpoint> determineEndpoints(T request, FlightDescriptor descriptor, Schema schema) {
    return List.of(new FlightEndpoint(new Ticket(Any.pack(request).toByteArray())));
  }

  private static FlightInfo info(Schema schema, FlightDescriptor descriptor, Message ticket) {
    return new FlightInfo(schema, descriptor, List.of(new FlightEndpoint(new Ticket(Any.pack(ticket).toByteArray()))), -1, -1);
  }

  /** Who is calling: the authenticated user, or "" on a server without users. */
  private static String user(CallContext context) {
    return context.peerIdentity() == null ? "" : context.peerIdentity();
  }

  private Prepared preparedOf(CallContext context, ByteString handle) {
    Prepared p = prepared.get(user(context), handle);
    if (p == null) {
      throw CallStatus.NOT_FOUND.withDescription("no prepared statement " + handle.toStringUtf8()).toRuntimeException();
    }
    return p;
  }

  // ---- ad-hoc queries ----

  @Override
  public FlightInfo getFlightInfoStatement(CommandStatementQuery command, CallContext context, FlightDescriptor descriptor) {
    return Statuses.guard(() -> {
      Schema schema = session.resultSchema(command.getQuery());
      ByteString handle = statements.add(user(context), command.getQuery());
      return info(schema, descriptor, TicketStatementQuery.newBuilder().setStatementHandle(handle).build());
    });
  }

  @Override
  public SchemaResult getSchemaStatement(CommandStatementQuery command, CallContext context, FlightDescriptor descriptor) {
    return Statuses.guard(() -> new SchemaResult(session.resultSchema(command.getQuery())));
  }

  /**
   * A ticket is a packed Flight SQL message this server made; bytes that are none (a client's
   * garbage, a ticket of another server) are the client's error, not an internal one.
   */
  @Override
  public void getStream(CallContext context, org.apache.arrow.flight.Ticket ticket, ServerStreamListener listener) {
    try {
      Any.parseFrom(ticket.getBytes());
    } catch (InvalidProtocolBufferException e) {
      listener.error(CallStatus.INVALID_ARGUMENT.withDescription("the ticket is not one this server issued ("
          + ticket.getBytes().length + " bytes that are no Flight SQL message)").toRuntimeException());
      return;
    }
    super.getStream(context, ticket, listener);
  }

  @Override
  public void getStreamStatement(TicketStatementQuery ticket, CallContext context, ServerStreamListener listener) {
    String sql = statements.remove(user(context), ticket.getStatementHandle());
    if (sql == null) {
      listener.error(CallStatus.NOT_FOUND.withDescription("no statement " + ticket.getStatementHandle().toStringUtf8()
          + " (fetched already, cancelled, or never made)").toRuntimeException());
      return;
    }
    Statuses.stream(listener, () -> {
      try (VectorSchemaRoot result = cancellable(context, listener, ticket.getStatementHandle(), sql, List.of())) {
        sender.send(result, listener);
      }
    });
  }

  /**
   * Runs {@code sql}, cancellable by its owner through {@code handle} while it runs, and stopped
   * when the client cancels the call that waits for its rows (a JDBC driver's {@code
   * Statement.cancel} that only drops its call, a client that left). gRPC keeps {@code
   * isCancelled} current while this call's own cancel callback would wait behind it.
   */
  private VectorSchemaRoot cancellable(CallContext context, ServerStreamListener listener, ByteString handle, String sql,
      List<Object> values) {
    Running mine = new Running(user(context),
        dev.gpudf.sql.Cancellation.following(() -> closing || listener.isCancelled(), 0));
    // a prepared statement may run on several streams at once: each removes only its own entry
    running.put(handle, mine);
    try {
      return session.query(sql, values, timings -> { }, mine.cancellation());
    } finally {
      running.remove(handle, mine);
    }
  }

  /** Cancels {@code owner}'s query of {@code handle}, waiting or running; whether there was one. */
  private boolean cancel(String owner, ByteString handle) {
    if (statements.remove(owner, handle) != null) {
      return true;
    }
    Running r = running.get(handle);
    if (r != null && r.owner().equals(owner)) {
      r.cancellation().cancel();
      return true;
    }
    return false;
  }

  @Override
  public void cancelFlightInfo(CancelFlightInfoRequest request, CallContext context, StreamListener<CancelStatus> listener) {
    CancelStatus status = CancelStatus.NOT_CANCELLABLE;
    for (FlightEndpoint e : request.getInfo().getEndpoints()) {
      try {
        Any any = Any.parseFrom(e.getTicket().getBytes());
        ByteString handle = any.is(TicketStatementQuery.class) ? any.unpack(TicketStatementQuery.class).getStatementHandle()
            : any.is(CommandPreparedStatementQuery.class)
                ? any.unpack(CommandPreparedStatementQuery.class).getPreparedStatementHandle() : null;
        if (handle != null && cancel(user(context), handle)) {
          status = CancelStatus.CANCELLED;
        }
      } catch (InvalidProtocolBufferException ex) {
        listener.onError(CallStatus.INVALID_ARGUMENT.withDescription("not a gpudf ticket").toRuntimeException());
        return;
      }
    }
    listener.onNext(status);
    listener.onCompleted();
  }

  // ---- prepared statements ----

  @Override
  public void createPreparedStatement(ActionCreatePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    Statuses.action(listener, () -> {
      String sql = request.getQuery();
      boolean query = session.returnsRows(sql);
      // the JDBC driver takes an empty dataset schema for an update
      Schema dataset = query ? session.resultSchema(sql) : new Schema(List.of());
      Schema parameters = session.parameterSchema(sql);
      ByteString handle = prepared.add(user(context), new Prepared(sql, query, dataset, parameters));
      FlightSql.ActionCreatePreparedStatementResult result = FlightSql.ActionCreatePreparedStatementResult.newBuilder()
          .setPreparedStatementHandle(handle)
          .setDatasetSchema(ByteString.copyFrom(dataset.serializeAsMessage()))
          .setParameterSchema(ByteString.copyFrom(parameters.serializeAsMessage()))
          .build();
      listener.onNext(new Result(Any.pack(result).toByteArray()));
    });
  }

  @Override
  public void closePreparedStatement(ActionClosePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    prepared.remove(user(context), request.getPreparedStatementHandle());
    listener.onCompleted();
  }

  @Override
  public FlightInfo getFlightInfoPreparedStatement(CommandPreparedStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    Prepared p = preparedOf(context, command.getPreparedStatementHandle());
    if (!p.query) {
      throw CallStatus.INVALID_ARGUMENT.withDescription("the prepared statement is an update, not a query: " + p.sql)
          .toRuntimeException();
    }
    return info(p.dataset, descriptor, command);
  }

  @Override
  public SchemaResult getSchemaPreparedStatement(CommandPreparedStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    return new SchemaResult(preparedOf(context, command.getPreparedStatementHandle()).dataset);
  }

  @Override
  public void getStreamPreparedStatement(CommandPreparedStatementQuery command, CallContext context,
      ServerStreamListener listener) {
    Statuses.stream(listener, () -> {
      Prepared p = preparedOf(context, command.getPreparedStatementHandle());
      try (VectorSchemaRoot result = cancellable(context, listener, command.getPreparedStatementHandle(), p.sql,
          p.values)) {
        sender.send(result, listener);
      }
    });
  }

  @Override
  public Runnable acceptPutPreparedStatementQuery(CommandPreparedStatementQuery command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return () -> Statuses.put(ackStream, () -> {
      Prepared p = preparedOf(context, command.getPreparedStatementHandle());
      p.values = Parameters.read(stream, p.parameters);
    });
  }

  @Override
  public Runnable acceptPutPreparedStatementUpdate(CommandPreparedStatementUpdate command, CallContext context,
      FlightStream stream, StreamListener<PutResult> ackStream) {
    return () -> Statuses.put(ackStream, () -> {
      Prepared p = preparedOf(context, command.getPreparedStatementHandle());
      mayWrite(context, "run an update");
      if (session.insertsBoundRows(p.sql)) {
        // INSERT ... VALUES (?, ...) with a JDBC batch bound: the rows go in as one statement
        try (VectorSchemaRoot rows = Parameters.readTable(stream, p.parameters, session.allocator())) {
          sendCount(ackStream, changing(() -> session.insertBound(p.sql, rows)));
        }
        return;
      }
      List<List<Object>> rows = Parameters.readRows(stream, p.parameters);
      if (rows.isEmpty() && !p.parameters.getFields().isEmpty()) {
        throw Parameters.noneBound(p.parameters);
      }
      // markers elsewhere (INSERT ... SELECT ... WHERE x > ?): the statement runs once per bound row
      sendCount(ackStream, changing(() -> rows.isEmpty() ? session.update(p.sql)
          : rows.stream().mapToLong(values -> session.update(p.sql, values)).sum()));
    });
  }

  // ---- updates and ingest ----

  @Override
  public Runnable acceptPutStatement(CommandStatementUpdate command, CallContext context, FlightStream stream,
      StreamListener<PutResult> ackStream) {
    return () -> Statuses.put(ackStream, () -> {
      mayWrite(context, "run an update");
      sendCount(ackStream, changing(() -> session.update(command.getQuery())));
    });
  }

  @Override
  public Runnable acceptPutStatementBulkIngest(CommandStatementIngest command, CallContext context, FlightStream stream,
      StreamListener<PutResult> ackStream) {
    return () -> Statuses.put(ackStream, () -> {
      mayWrite(context, "ingest rows");
      sendCount(ackStream, changing(() -> Ingest.run(session, command, stream)));
    });
  }

  private void sendCount(StreamListener<PutResult> ackStream, long rows) {
    byte[] bytes = FlightSql.DoPutUpdateResult.newBuilder().setRecordCount(rows).build().toByteArray();
    try (ArrowBuf buf = allocator.buffer(bytes.length)) {
      buf.writeBytes(bytes);
      ackStream.onNext(PutResult.metadata(buf));
    }
  }

  // ---- catalog ----

  @Override
  public void getStreamSqlInfo(CommandGetSqlInfo command, CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> sqlInfo.send(command.getInfoList(), listener));
  }

  @Override
  public void getStreamCatalogs(CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> sendEmpty(Schemas.GET_CATALOGS_SCHEMA, listener));
  }

  @Override
  public void getStreamSchemas(CommandGetDbSchemas command, CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> sendEmpty(Schemas.GET_SCHEMAS_SCHEMA, listener));
  }

  @Override
  public void getStreamTableTypes(CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(Schemas.GET_TABLE_TYPES_SCHEMA, allocator)) {
        ((VarCharVector) root.getVector(0)).setSafe(0, "TABLE".getBytes(StandardCharsets.UTF_8));
        root.setRowCount(1);
        sender.send(root, listener);
      }
    });
  }

  @Override
  public void getStreamTables(CommandGetTables command, CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> {
      boolean withSchema = command.getIncludeSchema();
      boolean tables = command.getTableTypesCount() == 0 || command.getTableTypesList().contains("TABLE");
      boolean noCatalog = !command.hasCatalog() || command.getCatalog().isEmpty();
      boolean noSchema = !command.hasDbSchemaFilterPattern() || like(command.getDbSchemaFilterPattern()).matcher("").matches();
      Pattern name = command.hasTableNameFilterPattern() ? like(command.getTableNameFilterPattern()) : null;
      List<String> names = new ArrayList<>();
      if (tables && noCatalog && noSchema) {
        session.catalog().names().stream().filter(n -> name == null || name.matcher(n).matches()).forEach(names::add);
      }
      try (VectorSchemaRoot root = VectorSchemaRoot.create(
          withSchema ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA, allocator)) {
        VarCharVector tableName = (VarCharVector) root.getVector("table_name");
        VarCharVector tableType = (VarCharVector) root.getVector("table_type");
        for (int i = 0; i < names.size(); i++) {
          root.getVector("catalog_name").setNull(i);
          root.getVector("db_schema_name").setNull(i);
          tableName.setSafe(i, names.get(i).getBytes(StandardCharsets.UTF_8));
          tableType.setSafe(i, "TABLE".getBytes(StandardCharsets.UTF_8));
          if (withSchema) {
            ((VarBinaryVector) root.getVector("table_schema")).setSafe(i, session.tableSchema(names.get(i)).serializeAsMessage());
          }
        }
        root.setRowCount(names.size());
        sender.send(root, listener);
      }
    });
  }

  /** A SQL LIKE pattern ({@code %}, {@code _}, {@code \} escapes) as a regular expression, case-insensitive. */
  private static Pattern like(String pattern) {
    StringBuilder re = new StringBuilder();
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      if (c == '\\' && i + 1 < pattern.length()) {
        re.append(Pattern.quote(String.valueOf(pattern.charAt(++i))));
      } else if (c == '%') {
        re.append(".*");
      } else if (c == '_') {
        re.append('.');
      } else {
        re.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  }

  @Override
  public void getStreamTypeInfo(CommandGetXdbcTypeInfo command, CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(Schemas.GET_TYPE_INFO_SCHEMA, allocator)) {
        int row = 0;
        for (TypeInfo t : TypeInfo.ALL) {
          if (command.hasDataType() && command.getDataType() != t.jdbcType()) {
            continue;
          }
          ((VarCharVector) root.getVector("type_name")).setSafe(row, t.name().getBytes(StandardCharsets.UTF_8));
          ((IntVector) root.getVector("data_type")).setSafe(row, t.jdbcType());
          ((IntVector) root.getVector("sql_data_type")).setSafe(row, t.jdbcType());
          if (t.size() > 0) {
            ((IntVector) root.getVector("column_size")).setSafe(row, t.size());
          } else {
            root.getVector("column_size").setNull(row);
          }
          ((IntVector) root.getVector("nullable")).setSafe(row, java.sql.DatabaseMetaData.typeNullable);
          ((BitVector) root.getVector("case_sensitive")).setSafe(row, t.jdbcType() == java.sql.Types.VARCHAR ? 1 : 0);
          ((IntVector) root.getVector("searchable")).setSafe(row, java.sql.DatabaseMetaData.typeSearchable);
          ((BitVector) root.getVector("fixed_prec_scale")).setSafe(row, 0);
          for (String empty : List.of("literal_prefix", "literal_suffix", "create_params", "unsigned_attribute",
              "auto_increment", "local_type_name", "minimum_scale", "maximum_scale", "datetime_subcode", "num_prec_radix",
              "interval_precision")) {
            root.getVector(empty).setNull(row);
          }
          row++;
        }
        root.setRowCount(row);
        sender.send(root, listener);
      }
    });
  }

  @Override
  public void getStreamPrimaryKeys(FlightSql.CommandGetPrimaryKeys command, CallContext context, ServerStreamListener listener) {
    Statuses.stream(listener, () -> sendEmpty(Schemas.GET_PRIMARY_KEYS_SCHEMA, listener));
  }

  @Override
  public void getStreamExportedKeys(FlightSql.CommandGetExportedKeys command, CallContext context,
      ServerStreamListener listener) {
    Statuses.stream(listener, () -> sendEmpty(Schemas.GET_EXPORTED_KEYS_SCHEMA, listener));
  }

  @Override
  public void getStreamImportedKeys(FlightSql.CommandGetImportedKeys command, CallContext context,
      ServerStreamListener listener) {
    Statuses.stream(listener, () -> sendEmpty(Schemas.GET_IMPORTED_KEYS_SCHEMA, listener));
  }

  @Override
  public void getStreamCrossReference(FlightSql.CommandGetCrossReference command, CallContext context,
      ServerStreamListener listener) {
    Statuses.stream(listener, () -> sendEmpty(Schemas.GET_CROSS_REFERENCE_SCHEMA, listener));
  }

  private void sendEmpty(Schema schema, ServerStreamListener listener) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      root.setRowCount(0);
      sender.send(root, listener);
    }
  }

  /** Ends the calls in flight: result streams stop at their next batch, running queries are cancelled. */
  void stopCalls() {
    closing = true;
  }

  @Override
  public void close() {
    statements.clear();
    prepared.clear();
    try {
      exports.close();
    } finally {
      producerMappings.close();
    }
  }
}
