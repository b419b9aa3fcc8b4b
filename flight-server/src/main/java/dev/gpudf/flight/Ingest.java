package dev.gpudf.flight;

import dev.gpudf.columnar.ArrowDictionaries;
import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import java.util.Locale;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * Bulk ingest ({@code CommandStatementIngest}): the batches of a DoPut into a table, created from
 * the first batch's schema, replacing its rows, or appended (each batch as an INSERT, so column
 * types convert and constraints hold). Defaults when the client leaves an option unset: create a
 * missing table, fail on an existing one. A failure after some batches leaves those batches in.
 */
final class Ingest {
  private Ingest() {}

  /** Loads the stream into the command's table and returns the rows ingested. */
  static long run(GpuSession session, CommandStatementIngest command, FlightStream stream) {
    if (command.getTemporary() || !command.getCatalog().isEmpty() || !command.getSchema().isEmpty()) {
      throw new NotSupportedException("ingest into temporary tables or named catalogs/schemas is not supported");
    }
    String table = command.getTable().toLowerCase(Locale.ROOT);
    if (table.isEmpty()) {
      throw new UserException("ingest needs a table name");
    }
    TableNotExistOption ifMissing = command.getTableDefinitionOptions().getIfNotExist();
    TableExistsOption ifExists = command.getTableDefinitionOptions().getIfExists();
    boolean exists = session.catalog().names().contains(table);
    if (!exists && ifMissing == TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL) {
      throw new UserException("no table '" + table + "' to ingest into");
    }
    if (exists && (ifExists == TableExistsOption.TABLE_EXISTS_OPTION_FAIL
        || ifExists == TableExistsOption.TABLE_EXISTS_OPTION_UNSPECIFIED)) {
      throw new UserException("table '" + table + "' already exists (ingest with append or replace)");
    }
    boolean first = true;
    long rows = 0;
    // a pandas categorical arrives dictionary-encoded: its values are stored, not its codes
    boolean encoded = ArrowDictionaries.encoded(stream.getSchema());
    for (long b = 1; stream.next(); b++) {
      ArrowInput.check(stream.getRoot(), stream.getDictionaryProvider(), "ingest into '" + table + "', batch " + b);
      // a host table shares the buffers it is made from: copy the stream's into the session's memory
      try (VectorSchemaRoot in = encoded ? ArrowDictionaries.decode(stream.getRoot(), stream.getDictionaryProvider(),
              session.allocator()) : null;
          VectorSchemaRoot batch = VectorSchemaRoot.create((in == null ? stream.getRoot() : in).getSchema(),
              session.allocator())) {
        batch.allocateNew();
        VectorSchemaRootAppender.append(batch, in == null ? stream.getRoot() : in);
        if (first && !exists) {
          session.catalog().register(table, batch);
        } else if (first && ifExists == TableExistsOption.TABLE_EXISTS_OPTION_REPLACE) {
          session.catalog().replace(table, batch);
        } else {
          session.insert(table, batch);
        }
        rows += batch.getRowCount();
      }
      first = false;
    }
    if (first) {
      // no batches: a table of the stream's schema and no rows
      try (VectorSchemaRoot empty = VectorSchemaRoot.create(encoded
          ? ArrowDictionaries.decoded(stream.getSchema(), stream.getDictionaryProvider()) : stream.getSchema(),
          session.allocator())) {
        empty.setRowCount(0);
        if (!exists) {
          session.catalog().register(table, empty);
        } else if (ifExists == TableExistsOption.TABLE_EXISTS_OPTION_REPLACE) {
          session.catalog().replace(table, empty);
        }
      }
    }
    return rows;
  }
}
