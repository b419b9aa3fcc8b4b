package dev.gpudf.sql;

import dev.gpudf.kernels.Exec;
import java.util.List;

/**
 * Per-query state: the kernels' execution state, the catalog and the statement's parameter
 * values; the session closes it after the query.
 */
public final class QueryContext implements AutoCloseable {
  private final Exec exec;
  private final Catalog catalog;
  private final List<Object> parameters;

  QueryContext(Exec exec, Catalog catalog, List<Object> parameters) {
    this.exec = exec;
    this.catalog = catalog;
    this.parameters = parameters;
  }

  /** The values of the statement's {@code ?} parameters, in order (a null element is SQL NULL). */
  public List<Object> parameters() {
    return parameters;
  }

  public Exec exec() {
    return exec;
  }

  public Catalog catalog() {
    return catalog;
  }

  @Override
  public void close() {
    exec.close();
  }
}
