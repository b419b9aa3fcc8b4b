package dev.gpudf.sql;

import dev.gpudf.columnar.error.InternalException;
import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * TPC-H tables from io.trino.tpch's generators as Arrow (money columns DECIMAL(15,2), keys
 * BIGINT, as the TPC-H schema has them), generated in parallel parts, and the 22 queries. For a
 * server or shell that starts with no data, the benchmark harness, and tests.
 */
public final class TpchTables {
  private TpchTables() {}

  /** One TPC-H table at {@code scale} (1.0 = SF1), generated on all cores; the caller closes it. */
  public static <E extends TpchEntity> VectorSchemaRoot arrow(BufferAllocator a, TpchTable<E> table, double scale) {
    return arrow(a, table, scale, Runtime.getRuntime().availableProcessors(), rows -> { });
  }

  /**
   * One TPC-H table generated as {@code parts} parts in parallel, concatenated in part order (the
   * rows of a one-part generation, in the same order); {@code progress} hears of every 64K rows
   * made, from any thread. The caller closes the result.
   */
  public static <E extends TpchEntity> VectorSchemaRoot arrow(BufferAllocator a, TpchTable<E> table, double scale, int parts,
      LongConsumer progress) {
    // NATION and REGION are fixed tables their generators do not split
    int n = table == TpchTable.NATION || table == TpchTable.REGION ? 1 : Math.max(1, parts);
    List<VectorSchemaRoot> pieces = new ArrayList<>();
    try {
      pieces.addAll(IntStream.rangeClosed(1, n).parallel().mapToObj(p -> part(a, table, scale, p, n, progress)).toList());
      if (pieces.size() == 1) {
        return pieces.remove(0);
      }
      return concatenate(a, pieces);
    } finally {
      pieces.forEach(VectorSchemaRoot::close);
    }
  }

  /**
   * One TPC-H table generated as {@code parts} parts on {@code threads} threads, each part handed
   * to {@code sink} on the calling thread in part order (the rows of a one-part generation, in
   * the same order) and closed when {@code sink} returns; at most {@code 2 * threads} parts are
   * held at once, so a table larger than memory can stream into an engine. {@code progress}
   * hears of every 64K rows made, from any thread. A failure of a part or of the sink stops the
   * generation, frees what was made and is rethrown.
   */
  public static <E extends TpchEntity> void generate(BufferAllocator a, TpchTable<E> table, double scale, int parts,
      int threads, LongConsumer progress, java.util.function.Consumer<VectorSchemaRoot> sink) {
    int n = partsOf(table, parts);
    generate(a, table, scale, n, 1, n, threads, progress, sink);
  }

  /**
   * The parts a generation of {@code table} in {@code parts} parts makes: one for NATION and
   * REGION, whose generators have no parts.
   */
  public static int partsOf(TpchTable<?> table, int parts) {
    return table == TpchTable.NATION || table == TpchTable.REGION ? 1 : Math.max(1, parts);
  }

  /**
   * Parts {@code first} to {@code last} (1-based, inclusive) of {@link #generate(BufferAllocator,
   * TpchTable, double, int, int, LongConsumer, java.util.function.Consumer) a generation in
   * {@code parts} parts}, as that one makes them: a table written as several files, each a range
   * of the parts. {@code parts} must be {@link #partsOf} the table's.
   */
  public static <E extends TpchEntity> void generate(BufferAllocator a, TpchTable<E> table, double scale, int parts,
      int first, int last, int threads, LongConsumer progress, java.util.function.Consumer<VectorSchemaRoot> sink) {
    if (parts != partsOf(table, parts) || first < 1 || last > parts || first > last) {
      throw new IllegalArgumentException("parts " + first + " to " + last + " of " + parts + " of " + table.getTableName());
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(Math.max(1, threads));
    java.util.ArrayDeque<java.util.concurrent.Future<VectorSchemaRoot>> pending = new java.util.ArrayDeque<>();
    try {
      int next = first;
      while (next <= last || !pending.isEmpty()) {
        while (next <= last && pending.size() < 2 * Math.max(1, threads)) {
          int p = next++;
          pending.add(pool.submit(() -> part(a, table, scale, p, parts, progress)));
        }
        try (VectorSchemaRoot root = pending.poll().get()) {
          sink.accept(root);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InternalException("TPC-H generation was interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new InternalException("TPC-H generation failed", e.getCause());
    } finally {
      pending.forEach(TpchTables::freeWhenDone);
      pool.shutdown();
    }
  }

  /** Cancels a part not yet started, or waits for one under way and frees its rows. */
  private static void freeWhenDone(java.util.concurrent.Future<VectorSchemaRoot> f) {
    if (f.cancel(false)) {
      return;
    }
    try {
      f.get().close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      // a part that failed closed its own vectors (see part); the first failure is what the caller sees
      return;
    }
  }

  /** The rows of {@code pieces} (same schema) one after the other in one new root; the caller keeps the pieces and closes the result. */
  public static VectorSchemaRoot concatenate(BufferAllocator a, List<VectorSchemaRoot> pieces) {
    VectorSchemaRoot out = VectorSchemaRoot.create(pieces.get(0).getSchema(), a);
    try {
      allocateExactly(out, pieces);
      VectorSchemaRootAppender.append(out, pieces.toArray(new VectorSchemaRoot[0]));
      return out;
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  /**
   * Sizes {@code out}'s vectors for the rows and string bytes of {@code pieces} together: the
   * appender would double a string buffer past what it needs, and lineitem's comments at SF10
   * (1.6 GB) would double past Arrow's 2 GiB limit.
   */
  private static void allocateExactly(VectorSchemaRoot out, List<VectorSchemaRoot> pieces) {
    int rows = pieces.stream().mapToInt(VectorSchemaRoot::getRowCount).sum();
    for (int c = 0; c < out.getFieldVectors().size(); c++) {
      FieldVector v = out.getVector(c);
      if (v instanceof org.apache.arrow.vector.BaseVariableWidthVector strings) {
        int column = c;
        long bytes = pieces.stream()
            .mapToLong(p -> ((org.apache.arrow.vector.BaseVariableWidthVector) p.getVector(column)).sizeOfValueBuffer()).sum();
        strings.allocateNew(Math.max(1, bytes), Math.max(1, rows));
      } else if (v instanceof org.apache.arrow.vector.FixedWidthVector fixed) {
        fixed.allocateNew(Math.max(1, rows));
      } else {
        v.allocateNew();
      }
    }
  }

  private static <E extends TpchEntity> VectorSchemaRoot part(BufferAllocator a, TpchTable<E> table, double scale, int part,
      int parts, LongConsumer progress) {
    List<FieldVector> vectors = new ArrayList<>();
    List<TpchColumn<E>> columns = table.getColumns();
    for (TpchColumn<E> c : columns) {
      String name = c.getColumnName();
      FieldVector v = switch (c.getType().getBase()) {
        case IDENTIFIER -> new BigIntVector(name, a);
        case INTEGER -> new IntVector(name, a);
        case DATE -> new DateDayVector(name, a);
        case DOUBLE -> new DecimalVector(name, a, 15, 2);
        case VARCHAR -> new VarCharVector(name, a);
      };
      v.allocateNew();
      vectors.add(v);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    try {
      int i = 0;
      for (E r : table.createGenerator(scale, part, parts)) {
        for (int k = 0; k < columns.size(); k++) {
          TpchColumn<E> c = columns.get(k);
          FieldVector v = vectors.get(k);
          switch (c.getType().getBase()) {
            case IDENTIFIER -> ((BigIntVector) v).setSafe(i, c.getIdentifier(r));
            case INTEGER -> ((IntVector) v).setSafe(i, c.getInteger(r));
            case DATE -> ((DateDayVector) v).setSafe(i, c.getDate(r));
            // money is whole cents: the unscaled value of DECIMAL(15, 2)
            case DOUBLE -> ((DecimalVector) v).setSafe(i, Math.round(c.getDouble(r) * 100));
            case VARCHAR -> ((VarCharVector) v).setSafe(i, c.getString(r).getBytes(StandardCharsets.UTF_8));
          }
        }
        if (++i % 65536 == 0) {
          progress.accept(65536);
        }
      }
      progress.accept(i % 65536);
      root.setRowCount(i);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /** Registers all eight TPC-H tables at {@code scale} in {@code catalog} and returns their names. */
  public static List<String> loadAll(Catalog catalog, double scale, BufferAllocator allocator) {
    List<String> names = new ArrayList<>();
    for (TpchTable<?> t : TpchTable.getTables()) {
      try (VectorSchemaRoot root = arrow(allocator, t, scale)) {
        catalog.register(t.getTableName(), root);
      }
      names.add(t.getTableName());
    }
    return names;
  }

  /**
   * The 22 queries for data at {@code scale}: q11's FRACTION is 0.0001 / SF (TPC-H 2.4.11.3), so
   * that it keeps about as many parts at every scale.
   */
  public static Map<String, String> queries(double scale) {
    Map<String, String> out = queries();
    String fraction = new java.math.BigDecimal("0.0001").divide(java.math.BigDecimal.valueOf(scale), java.math.MathContext.DECIMAL64)
        .stripTrailingZeros().toPlainString();
    String q11 = out.get("q11");
    if (!q11.contains("* 0.0001 ")) {
      throw new InternalException("q11 in tpch-queries.sql no longer has its FRACTION 0.0001");
    }
    out.put("q11", q11.replace("* 0.0001 ", "* " + fraction + " "));
    return out;
  }

  /** The 22 queries by name ({@code q1} .. {@code q22}, in that order), from {@code tpch-queries.sql}, as written for SF1. */
  public static Map<String, String> queries() {
    String text;
    try (InputStream in = TpchTables.class.getResourceAsStream("tpch-queries.sql")) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException | NullPointerException e) {
      throw new InternalException("cannot read tpch-queries.sql from the classpath", e);
    }
    Map<String, String> out = new LinkedHashMap<>();
    String[] blocks = text.split("(?m)^-- name: ");
    for (int b = 1; b < blocks.length; b++) {
      int eol = blocks[b].indexOf('\n');
      out.put(blocks[b].substring(0, eol).strip(), blocks[b].substring(eol + 1).strip());
    }
    return out;
  }
}
