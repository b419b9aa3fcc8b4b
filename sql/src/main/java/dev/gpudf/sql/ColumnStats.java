package dev.gpudf.sql;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.error.GpuOutOfMemoryException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.kernels.TableOps;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Supplier;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.rex.RexNode;

/**
 * Distinct-value counts of catalog columns, and the rows a small table's filter keeps, which
 * {@link JoinOrder} needs to estimate joins. A count is measured on the table's own backend (a
 * group-by of the column, or the filter run) the first time a plan asks for it and kept until the
 * table's rows change, so only the cold plan of a query pays for it.
 */
final class ColumnStats {
  private record Key(String table, long version, List<Integer> columns) {}

  private final Catalog catalog;
  private final Supplier<QueryContext> contexts;
  private final java.util.function.Function<String, ChunkRead> earlyReads;
  private final Map<Key, OptionalDouble> counts = new HashMap<>();

  /**
   * Statistics of {@code catalog}'s tables, measured in query contexts from {@code contexts} (each
   * closed after use); {@code earlyReads} gives the read of a file table's chunk 0 that the
   * statement being planned started ({@link EarlyReads}), for a count to take, or null.
   */
  ColumnStats(Catalog catalog, Supplier<QueryContext> contexts, java.util.function.Function<String, ChunkRead> earlyReads) {
    this.catalog = catalog;
    this.contexts = contexts;
    this.earlyReads = earlyReads;
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

  private record FilterKey(String table, long version, List<Integer> columns, String condition) {}

  private final Map<FilterKey, OptionalDouble> kept = new HashMap<>();

  /**
   * The share of table {@code table}'s rows that {@code condition} keeps, counted by running it on
   * the table's own backend, once per table version; {@code condition} reads columns {@code columns}
   * of the table as its inputs 0, 1, ... A table kept in files is read for it while planning:
   * the query reads it anyway, a GPU catalog keeps what it reads for the query's scans, and a read
   * of chunk 0 that the statement started early is taken rather than made again; guessing instead
   * ran TPC-H q9's filter of part, 5% of it, last of five joins on files (2.3x its time on
   * resident tables). Empty for a condition the backends cannot evaluate, or while the device is
   * too full. Only for small tables: the caller decides which.
   */
  synchronized OptionalDouble keptShare(String table, int[] columns, RexNode condition, RelOptCluster cluster) {
    long version = catalog.version(table);
    FilterKey key = new FilterKey(table, version, java.util.Arrays.stream(columns).boxed().toList(), condition.toString());
    OptionalDouble known = kept.get(key);
    if (known != null) {
      return known;
    }
    kept.keySet().removeIf(k -> k.table().equals(table) && k.version() != version);
    Catalog.Shape shape = catalog.shape(table);
    List<dev.gpudf.columnar.DataType> types = java.util.Arrays.stream(columns).mapToObj(shape.types()::get).toList();
    OptionalDouble measured;
    try (QueryContext ctx = contexts.get()) {
      dev.gpudf.kernels.Expr expr = RexToExpr.translate(condition, types, cluster, List.of());
      long rows = 0;
      for (int i = 0; i < shape.chunks(); i++) {
        if (shape.ranges() != null && ChunkPruning.excludes(condition, inputRanges(shape.ranges().get(i), columns),
            cluster.getRexBuilder())) {
          // the files' metadata says no row of this chunk passes (a Hive partition the filter
          // drops): it keeps none, and is not read, as the query's scan will not read it
          continue;
        }
        ChunkRead early = i == 0 && catalog.inFiles(table) ? earlyReads.apply(table) : null;
        try (Table<?> chunk = catalog.acquire(table, i, columns, early);
            dev.gpudf.columnar.Column mask = TableOps.evaluate(ctx.exec(), chunk, expr)) {
          rows += dev.gpudf.kernels.Reduce.countTrue(ctx.exec(), mask);
        }
      }
      measured = OptionalDouble.of(shape.rows() == 0 ? 1 : rows / (double) shape.rows());
    } catch (GpuOutOfMemoryException e) {
      // as in distinct: this plan estimates without the count, and a later one measures again
      return OptionalDouble.empty();
    } catch (NotSupportedException | dev.gpudf.columnar.error.UserException e) {
      // a condition the backends refuse fails the query when it runs, with its own message; the
      // join order falls back to estimating it
      measured = OptionalDouble.empty();
    }
    kept.put(key, measured);
    return measured;
  }

  /** The ranges of {@code chunk}'s columns {@code columns}, in that order: a condition's inputs 0, 1, ... */
  private static List<dev.gpudf.formats.ValueRange> inputRanges(List<dev.gpudf.formats.ValueRange> chunk, int[] columns) {
    return java.util.Arrays.stream(columns).mapToObj(chunk::get).toList();
  }

  /**
   * For an integer column (and with {@code dates}, a DATE column) whose files give every chunk's
   * smallest and largest value: at most as many distinct values as the integers (days) between
   * them (NULL one more), and never more than the rows. Surrogate and foreign keys are dense, so the
   * bound is close for the columns joins use; without it a join of two low-cardinality keys (TPC-H
   * q5's customer and supplier nations) looks like a key join and runs first, into billions of
   * rows. Empty when any chunk's range is unknown.
   */
  static OptionalDouble span(Catalog.Shape shape, int column, boolean dates) {
    if (shape.ranges() == null || shape.rows() == 0) {
      return OptionalDouble.empty();
    }
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    boolean nulls = false;
    for (List<dev.gpudf.formats.ValueRange> chunk : shape.ranges()) {
      dev.gpudf.formats.ValueRange r = chunk.get(column);
      if (r == null || (r.hasValues() && !(r.min() instanceof Long || dates && r.min() instanceof Integer))) {
        return OptionalDouble.empty();
      }
      nulls |= r.hasNulls();
      if (r.hasValues()) {
        min = Math.min(min, ((Number) r.min()).longValue());
        max = Math.max(max, ((Number) r.max()).longValue());
      }
    }
    double span = min > max ? 0 : (double) max - (double) min + 1;
    return OptionalDouble.of(Math.min(shape.rows(), span + (nulls ? 1 : 0)));
  }

  private OptionalDouble measure(String name, int[] columns) {
    Catalog.Shape shape = catalog.shape(name);
    if (catalog.inFiles(name)) {
      // counting would read the files while planning: what their statistics bound is the estimate
      return columns.length == 1 ? span(shape, columns[0], false) : OptionalDouble.empty();
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
