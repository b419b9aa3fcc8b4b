package dev.gpudf.flight;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import java.util.Locale;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Bulk ingest ({@code CommandStatementIngest}): the batches of a DoPut into a table, created from
 * the stream's schema, replacing its rows, or appended (as one INSERT, so column types convert
 * and constraints hold). Defaults when the client leaves an option unset: create a missing table,
 * fail on an existing one. All or nothing: the rows are gathered first ({@link InboundBatches}),
 * so a failure in any batch leaves the table as it was.
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
    try (VectorSchemaRoot all = InboundBatches.gather(stream, session.allocator(), "ingest into '" + table + "'")) {
      if (!exists) {
        session.catalog().register(table, all);
      } else if (ifExists == TableExistsOption.TABLE_EXISTS_OPTION_REPLACE) {
        session.catalog().replace(table, all);
      } else {
        session.insert(table, all);
      }
      return all.getRowCount();
    }
  }
}
