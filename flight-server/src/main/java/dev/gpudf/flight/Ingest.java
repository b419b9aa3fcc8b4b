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
 * the stream's schema, replacing its rows, or appended (as one INSERT, so column types convert
 * and constraints hold). Defaults when the client leaves an option unset: create a missing table,
 * fail on an existing one. All or nothing: the rows are gathered first, so a failure in any batch
 * leaves the table as it was.
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
    try (VectorSchemaRoot all = gather(session, stream, table)) {
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

  /**
   * Every batch of {@code stream}, each checked ({@link ArrowInput}) and its dictionary-encoded
   * columns decoded, copied into one root of the session's memory (a host table shares the buffers
   * it is made from, and the stream reuses its own); the caller closes it. Nothing is changed
   * until the whole stream has arrived, so an ingest that fails in its 4th batch leaves no rows.
   */
  private static VectorSchemaRoot gather(GpuSession session, FlightStream stream, String table) {
    boolean encoded = ArrowDictionaries.encoded(stream.getSchema());
    VectorSchemaRoot all = null;
    try {
      for (long b = 1; stream.next(); b++) {
        ArrowInput.check(stream.getRoot(), stream.getDictionaryProvider(), "ingest into '" + table + "', batch " + b);
        try (VectorSchemaRoot decoded = encoded ? ArrowDictionaries.decode(stream.getRoot(), stream.getDictionaryProvider(),
            session.allocator()) : null) {
          VectorSchemaRoot in = decoded == null ? stream.getRoot() : decoded;
          if (all == null) {
            all = VectorSchemaRoot.create(in.getSchema(), session.allocator());
            all.allocateNew();
          }
          VectorSchemaRootAppender.append(all, in);
        }
      }
      if (all == null) {
        // no batches: a table of the stream's schema and no rows
        all = VectorSchemaRoot.create(encoded ? ArrowDictionaries.decoded(stream.getSchema(), stream.getDictionaryProvider())
            : stream.getSchema(), session.allocator());
        all.setRowCount(0);
      }
      return all;
    } catch (RuntimeException e) {
      if (all != null) {
        all.close();
      }
      throw e;
    }
  }
}
