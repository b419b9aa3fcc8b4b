package dev.gpudf.sql;

import dev.gpudf.formats.ValueRange;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.util.SqlBasicVisitor;

/**
 * The first chunk of each file table a statement names, read while the statement is still being
 * planned: the tables and columns it can read are the names it uses, and once it is validated the
 * rest of planning (tens to hundreds of milliseconds in a fresh process) runs on one core while the
 * catalog's reader decodes on the others. The columns are those of the table whose names the
 * statement uses anywhere, a superset of what its plan's scans take (a scan takes the columns it
 * needs out of a wider read, {@link ChunkRead#covers}); a read no scan takes is closed with the
 * query. Per query: made by {@link GpuSession#query}, which closes it; its reads pass to the
 * query's {@link QueryContext} ({@link #takeAll}) as reads started ahead of the scans.
 */
final class EarlyReads implements AutoCloseable {
  // by table (lower case): the read of its chunk 0
  private final Map<String, ChunkRead> reads = new LinkedHashMap<>();

  /**
   * The names a parsed statement uses (tables, columns, aliases), and among them those compared
   * with a constant (the filters that may drop chunks); see {@link #names}.
   */
  record Names(Set<String> all, Set<String> comparedWithConstants) {}

  /**
   * The names {@code parsed} uses, for {@link #start}; null when a SELECT list takes every column
   * ({@code *}, {@code t.*}) other than under {@code EXISTS}, where no column is read.
   */
  static Names names(SqlNode parsed) {
    Set<String> compared = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    java.util.Set<SqlNode> existing = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    boolean[] star = {false};
    parsed.accept(new SqlBasicVisitor<Void>() {
      @Override
      public Void visit(SqlCall call) {
        if (call.getKind() == SqlKind.EXISTS) {
          call.getOperandList().forEach(existing::add);
        }
        if (call instanceof SqlSelect select && !existing.contains(select) && select.getSelectList() != null) {
          for (SqlNode item : select.getSelectList()) {
            star[0] |= item instanceof SqlIdentifier id && id.isStar();
          }
        }
        if (call.getKind().belongsTo(SqlKind.COMPARISON) || call.getKind() == SqlKind.BETWEEN
            || call.getKind() == SqlKind.IN || call.getKind() == SqlKind.NOT_IN || call.getKind() == SqlKind.LIKE) {
          // a column against constants (a literal, DATE '...' - INTERVAL ..., a list of them)
          List<Set<String>> operands = call.getOperandList().stream().map(EarlyReads::identifiers).toList();
          if (operands.stream().anyMatch(Set::isEmpty)) {
            operands.forEach(compared::addAll);
          }
        }
        return super.visit(call);
      }
    });
    return star[0] ? null : new Names(identifiers(parsed), compared);
  }

  /** The names of the identifiers in {@code node} (none in a constant expression). */
  private static Set<String> identifiers(SqlNode node) {
    Set<String> out = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    if (node != null) {
      node.accept(new SqlBasicVisitor<Void>() {
        @Override
        public Void visit(SqlIdentifier id) {
          out.addAll(id.names);
          return null;
        }
      });
    }
    return out;
  }

  /**
   * Starts reading chunk 0 of each file table of {@code catalog} among the {@code names} (from
   * {@link #names}; null: none), with the table's columns among them, unless a comparison with a
   * constant may drop that chunk ({@link #mayBePruned}); tables read before (by an earlier call)
   * are left alone.
   */
  void start(Catalog catalog, Names statement) {
    if (statement == null) {
      return;
    }
    Set<String> names = statement.all();
    catalog.shapes().forEach((table, shape) -> {
      String key = table.toLowerCase(Locale.ROOT);
      if (!names.contains(table) || reads.containsKey(key)) {
        return;
      }
      List<Integer> columns = new ArrayList<>();
      for (int i = 0; i < shape.names().size(); i++) {
        if (names.contains(shape.names().get(i))) {
          columns.add(i);
        }
      }
      List<Integer> compared =
          columns.stream().filter(c -> statement.comparedWithConstants().contains(shape.names().get(c))).toList();
      if (columns.isEmpty() || mayBePruned(shape, compared)) {
        return;
      }
      // null when the table is resident or its columns are on the device already
      ChunkRead read = catalog.readAhead(table, 0, columns.stream().mapToInt(Integer::intValue).toArray());
      if (read != null) {
        reads.put(key, read);
      }
    });
  }

  /**
   * Whether a filter on one of {@code columns} (those compared with constants) may drop chunk 0
   * from the plan ({@link ChunkPruning}): the files' metadata gives the column a range in chunk 0
   * that another chunk's range does not overlap, as a Hive partition column's value, or a sorted
   * column's, does. Such a chunk, read early and then not scanned, would hold the catalog's reader
   * while the chunks the plan does scan wait for it.
   */
  private static boolean mayBePruned(Catalog.Shape shape, List<Integer> columns) {
    List<List<ValueRange>> ranges = shape.ranges();
    if (ranges == null || ranges.size() < 2) {
      return false;
    }
    for (int c : columns) {
      ValueRange first = ranges.get(0).get(c);
      if (first == null || !first.hasValues()) {
        continue;
      }
      for (List<ValueRange> chunk : ranges.subList(1, ranges.size())) {
        ValueRange r = chunk.get(c);
        if (r != null && r.hasValues()
            && (ValueRange.compare(first.max(), r.min()) < 0 || ValueRange.compare(r.max(), first.min()) < 0)) {
          return true;
        }
      }
    }
    return false;
  }

  /** The read of chunk 0 of table {@code table} started here, now the caller's to close, or null: none (left). */
  ChunkRead take(String table) {
    return reads.remove(table.toLowerCase(Locale.ROOT));
  }

  /** The reads started, by table (lower case), now the caller's to close; none are left here. */
  Map<String, ChunkRead> takeAll() {
    Map<String, ChunkRead> out = new LinkedHashMap<>(reads);
    reads.clear();
    return out;
  }

  /** Closes the reads not taken, after each has ended. */
  @Override
  public void close() {
    RuntimeException first = null;
    for (ChunkRead r : reads.values()) {
      try {
        r.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    reads.clear();
    if (first != null) {
      throw first;
    }
  }
}
