package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.columnar.error.NotSupportedException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Supplier;

/**
 * Distinct-value counts of catalog columns, which {@link JoinOrder} needs to estimate joins.
 * A count is measured on the table's own backend (a group-by of the column) the first time a
 * plan asks for it and kept until the table's rows change, so only the cold plan of a query
 * pays for it.
 */
final class ColumnStats {
  private record Key(String table, long version, List<Integer> columns) {}

  private final Catalog catalog;
  private final Supplier<QueryContext> contexts;
  private final Map<Key, OptionalDouble> counts = new HashMap<>();

  /** Statistics of {@code catalog}'s tables, measured in query contexts from {@code contexts} (each closed after use). */
  ColumnStats(Catalog catalog, Supplier<QueryContext> contexts) {
    this.catalog = catalog;
    this.contexts = contexts;
  }

  /**
   * The distinct values (NULL counting as one) of columns {@code columns} of table {@code table}
   * taken together; empty for columns that cannot be grouped, or while the device is too full to
   * group them.
   */
  synchronized OptionalDouble distinct(String table, int... columns) {
    long version = catalog.version(table);
    Key key = new Key(table, version, java.util.Arrays.stream(columns).boxed().toList());
    OptionalDouble known = counts.get(key);
    if (known != null) {
      return known;
    }
    counts.keySet().removeIf(k -> k.table().equals(table) && k.version() != version);
    OptionalDouble measured;
    try {
      measured = measure(table, columns);
    } catch (GpuOutOfMemoryException e) {
      // a device too full to measure while planning: this plan estimates without the count (it
      // is not kept, so a later plan measures again), and the query still gets QueryContext's
      // out-of-memory recovery
      return OptionalDouble.empty();
    }
    counts.put(key, measured);
    return measured;
  }

  private OptionalDouble measure(String name, int[] columns) {
    Catalog.Shape shape = catalog.shape(name);
    if (catalog.inFiles(name)) {
      // counting would read the files while planning: the join order does without the count
      return OptionalDouble.empty();
    }
    if (shape.rows() == 0) {
      return OptionalDouble.of(0);
    }
    List<String> names = java.util.Arrays.stream(columns).mapToObj(shape.names()::get).toList();
    List<Table<?>> groups = new java.util.ArrayList<>();
    int[] all = java.util.stream.IntStream.range(0, columns.length).toArray();
    try (QueryContext ctx = contexts.get()) {
      // a chunked table: the distinct keys of each chunk, then those of their concatenation
      for (int i = 0; i < shape.chunks(); i++) {
        try (Table<?> chunk = catalog.acquire(name, i, columns)) {
          groups.add(TableOps.groupBy(ctx.exec(), chunk, all, List.of(), names));
        }
      }
      if (groups.size() == 1) {
        return OptionalDouble.of(groups.get(0).rowCount());
      }
      try (Table<?> keys = TableOps.concat(ctx.exec(), groups, names);
          Table<?> distinct = TableOps.groupBy(ctx.exec(), keys, all, List.of(), names)) {
        return OptionalDouble.of(distinct.rowCount());
      }
    } catch (NotSupportedException e) {
      // a key type the group-by lacks: the join order falls back to treating the column as a key
      return OptionalDouble.empty();
    } finally {
      groups.forEach(Table::close);
    }
  }
}
