package dev.gpudf.bench;

import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.sql.TpchTables;
import io.trino.tpcds.Results;
import io.trino.tpcds.Session;
import io.trino.tpcds.Table;
import io.trino.tpcds.column.Column;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The 24 TPC-DS tables from io.trino.tpcds (the Java port of dsdgen) as Arrow, in the standard
 * schema's types (keys and integers INTEGER, money DECIMAL(p,s), dates DATE, CHAR and VARCHAR as
 * VARCHAR, NULLs where the generator makes them), generated in parallel row ranges; and the 99
 * queries with their qualification parameters. A sales table's generator also makes its returns
 * (each sales row yields at most one return row), so a sales table and its returns table come
 * from one pass.
 */
public final class TpcdsTables {
  private TpcdsTables() {}

  /** The tables in generation order: parents (with their returns) and every table that is no one's child. */
  public static List<Table> tables() {
    return Table.getBaseTables().stream().filter(t -> t != Table.DBGEN_VERSION).toList();
  }

  /**
   * Every table at {@code scale} (1.0 = SF1), each handed to {@code sink} (name, rows) on the
   * calling thread; the sink owns the rows once it returns (if it throws, they are closed here).
   * Parts are generated on {@code threads} threads. {@code progress} hears each table's name and
   * rows as it is made.
   */
  public static void generate(BufferAllocator a, double scale, int threads, BiConsumer<String, Long> progress,
      BiConsumer<String, VectorSchemaRoot> sink) {
    generate(a, scale, threads, 50_000, progress, sink);
  }

  /** {@link #generate(BufferAllocator, double, int, BiConsumer, BiConsumer)} in parts of at least {@code partRows} rows. */
  static void generate(BufferAllocator a, double scale, int threads, long partRows, BiConsumer<String, Long> progress,
      BiConsumer<String, VectorSchemaRoot> sink) {
    Session session = Session.getDefaultSession().withScale(scale).withNoSexism(false);
    java.util.concurrent.ForkJoinPool pool = new java.util.concurrent.ForkJoinPool(Math.max(1, threads));
    try {
      for (Table t : tables()) {
        if (t.isChild()) {
          continue;
        }
        long rows = session.getScaling().getRowCount(t);
        // a table that keeps history (item, store, ...) makes a row from the one before it: one part
        int parts = t.keepsHistory() ? 1 : (int) Math.max(1, Math.min(4L * threads, rows / partRows));
        // part p's rows of the table (and of its child); whatever is here when this ends is closed
        VectorSchemaRoot[][] made = new VectorSchemaRoot[parts][];
        try {
          pool.submit(() -> IntStream.range(0, parts).parallel()
              .forEach(p -> made[p] = part(a, t, session, rows * p / parts + 1, rows * (p + 1) / parts - rows * p / parts)))
              .get();
          emit(a, t.getName(), made, 0, progress, sink);
          if (t.hasChild()) {
            emit(a, t.getChild().getName(), made, 1, progress, sink);
          }
        } finally {
          for (VectorSchemaRoot[] p : made) {
            for (int k = 0; p != null && k < p.length; k++) {
              if (p[k] != null) {
                p[k].close();
              }
            }
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InternalException("TPC-DS generation was interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new InternalException("TPC-DS generation failed", e.getCause());
    } finally {
      pool.shutdown();
    }
  }

  /** Hands column {@code which} of the parts (the table or its child) to {@code sink} as one root: a single part itself, else their concatenation. */
  private static void emit(BufferAllocator a, String name, VectorSchemaRoot[][] made, int which,
      BiConsumer<String, Long> progress, BiConsumer<String, VectorSchemaRoot> sink) {
    VectorSchemaRoot root;
    if (made.length == 1) {
      root = made[0][which];
      made[0][which] = null;
    } else {
      root = TpchTables.concatenate(a, java.util.Arrays.stream(made).map(p -> p[which]).toList());
    }
    try {
      progress.accept(name, (long) root.getRowCount());
      sink.accept(name, root);
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /** Rows {@code first .. first + count - 1} of {@code table} (and of its child, second), as generated by one session. */
  private static VectorSchemaRoot[] part(BufferAllocator a, Table table, Session session, long first, long count) {
    VectorSchemaRoot[] out = new VectorSchemaRoot[2];
    try {
      out[0] = empty(a, table);
      out[1] = table.hasChild() ? empty(a, table.getChild()) : null;
      int[] made = new int[2];
      if (count > 0) {
        // the generator takes the first and the last row number of the part (not a count)
        for (List<List<String>> rows : Results.constructResults(table, first, first + count - 1, session)) {
          for (int k = 0; k < rows.size(); k++) {
            VectorSchemaRoot root = out[k];
            Column[] columns = (k == 0 ? table : table.getChild()).getColumns();
            set(root, columns, made[k]++, rows.get(k));
          }
        }
      }
      out[0].setRowCount(made[0]);
      if (out[1] != null) {
        out[1].setRowCount(made[1]);
      }
      return out;
    } catch (RuntimeException e) {
      for (VectorSchemaRoot r : out) {
        if (r != null) {
          r.close();
        }
      }
      throw e;
    }
  }

  private static VectorSchemaRoot empty(BufferAllocator a, Table table) {
    List<FieldVector> vectors = new ArrayList<>();
    for (Column c : table.getColumns()) {
      String name = c.getName();
      FieldVector v = switch (c.getType().getBase()) {
        case IDENTIFIER, INTEGER -> new IntVector(name, a);
        case DATE -> new DateDayVector(name, a);
        case DECIMAL -> new DecimalVector(name, a, c.getType().getPrecision().orElseThrow(), c.getType().getScale().orElseThrow());
        case VARCHAR, CHAR -> new VarCharVector(name, a);
        case TIME -> throw new InternalException("TPC-DS column " + name + " is a TIME, which no base table has");
      };
      v.allocateNew();
      vectors.add(v);
    }
    return new VectorSchemaRoot(vectors);
  }

  private static void set(VectorSchemaRoot root, Column[] columns, int i, List<String> values) {
    for (int c = 0; c < columns.length; c++) {
      String s = values.get(c);
      FieldVector v = root.getVector(c);
      if (s == null) {
        v.setNull(i);
        continue;
      }
      switch (columns[c].getType().getBase()) {
        case IDENTIFIER, INTEGER -> ((IntVector) v).setSafe(i, Integer.parseInt(s));
        case DATE -> ((DateDayVector) v).setSafe(i, (int) LocalDate.parse(s).toEpochDay());
        case DECIMAL -> ((DecimalVector) v).setSafe(i, new BigDecimal(s).setScale(((DecimalVector) v).getScale()));
        case VARCHAR, CHAR -> ((VarCharVector) v).setSafe(i, s.getBytes(StandardCharsets.UTF_8));
        case TIME -> throw new InternalException("unexpected TIME value in " + columns[c].getName());
      }
    }
  }

  /** The 99 queries by name ({@code q01} .. {@code q99}), as kept under {@code tpcds/} on the classpath. */
  public static Map<String, String> queries() {
    Map<String, String> out = new LinkedHashMap<>();
    for (int q = 1; q <= 99; q++) {
      String name = String.format("q%02d", q);
      try (InputStream in = TpcdsTables.class.getResourceAsStream("tpcds/" + name + ".sql")) {
        String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
        out.put(name, text.endsWith(";") ? text.substring(0, text.length() - 1) : text);
      } catch (IOException | NullPointerException e) {
        throw new InternalException("cannot read tpcds/" + name + ".sql from the classpath", e);
      }
    }
    return out;
  }
}
