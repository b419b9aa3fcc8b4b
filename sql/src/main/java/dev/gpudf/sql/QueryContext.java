package dev.gpudf.sql;

import dev.gpudf.kernels.Exec;

/** Per-query state: the kernels' execution state and the catalog; the session closes it after the query. */
public final class QueryContext implements AutoCloseable {
  private final Exec exec;
  private final Catalog catalog;

  QueryContext(Exec exec, Catalog catalog) {
    this.exec = exec;
    this.catalog = catalog;
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
