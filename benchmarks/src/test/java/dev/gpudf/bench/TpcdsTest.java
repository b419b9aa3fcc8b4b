package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.TpchAnswers;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The 99 TPC-DS queries on gpudf against DuckDB on the same generated rows (io.trino.tpcds at
 * {@code -Dgpudf.tpcds.scale}, 0.1 unless set: at 0.01 q12 divides by a partition's zero
 * revenue, which fails in gpudf, as in PostgreSQL, where DuckDB gives Infinity). An answer
 * agrees when its rows equal DuckDB's in order under the TPC-H comparison rules ({@link TpchAnswers}), or, for a query whose
 * {@code ORDER BY} leaves ties, as the same rows in another order. Every query runs and one line
 * a query is printed; the test fails on any wrong answer, and on any error of a query that is not
 * in {@link #NOT_YET} (or on a query there that now agrees, so the list only shrinks).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TpcdsTest {
  private static final double SCALE = Double.parseDouble(System.getProperty("gpudf.tpcds.scale", "0.1"));

  /** Queries that fail with an error today at the default scale. */
  private static final Set<String> NOT_YET = Set.of();

  private RootAllocator allocator;
  private DuckDBConnection duck;
  private final Map<String, VectorSchemaRoot> tables = new TreeMap<>();

  @BeforeAll
  void load() throws Exception {
    allocator = new RootAllocator();
    duck = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
    long t0 = System.nanoTime();
    TpcdsTables.generate(allocator, SCALE, Runtime.getRuntime().availableProcessors(), (name, rows) -> { },
        (name, root) -> {
          try {
            DuckDbTables.load(duck, allocator, name, root);
          } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
          }
          tables.put(name, root);
        });
    System.out.printf("TPC-DS SF%s: %d tables generated and loaded in %.1f s%n", SCALE, tables.size(),
        (System.nanoTime() - t0) / 1e9);
  }

  @AfterAll
  void close() throws Exception {
    tables.values().forEach(VectorSchemaRoot::close);
    duck.close();
    allocator.close();
  }

  @Test
  void allQueriesOnTheCpuAgreeWithDuckDb() throws Exception {
    try (GpuSession s = GpuSession.cpu(allocator)) {
      runAll(s, "cpu");
    }
  }

  @Test
  @RequiresGpu
  void allQueriesOnTheGpuAgreeWithDuckDb() throws Exception {
    try (Gpu gpu = Gpu.open(0); GpuSession s = GpuSession.gpu(gpu, allocator)) {
      runAll(s, "gpu");
    }
  }

  /**
   * The GPU again with every arithmetic-only expression in a generated kernel and every string
   * compared with constants in the match kernel ({@code StringMatch}), which otherwise start at a
   * million rows, more than this scale's tables hold.
   */
  @Test
  @RequiresGpu
  void allQueriesOnTheGpuWithGeneratedKernelsAgreeWithDuckDb() throws Exception {
    int before = dev.gpudf.kernels.Evaluate.setGeneratedMinRows(0);
    try (Gpu gpu = Gpu.open(0); GpuSession s = GpuSession.gpu(gpu, allocator)) {
      runAll(s, "gpu, generated");
    } finally {
      dev.gpudf.kernels.Evaluate.setGeneratedMinRows(before);
    }
  }

  private void runAll(GpuSession s, String backend) throws Exception {
    tables.forEach((name, root) -> s.catalog().register(name, root));
    Map<String, String> wrong = new TreeMap<>();
    Map<String, String> errors = new TreeMap<>();
    Set<String> agree = new TreeSet<>();
    for (Map.Entry<String, String> q : TpcdsTables.queries().entrySet()) {
      String name = q.getKey();
      List<Object[]> want;
      try (Statement st = duck.createStatement(); ResultSet rs = st.executeQuery(q.getValue())) {
        want = TpchAnswers.rows(rs);
      }
      long t0 = System.nanoTime();
      List<Object[]> got;
      try (VectorSchemaRoot r = s.query(q.getValue())) {
        got = TpchAnswers.rows(r);
      } catch (RuntimeException e) {
        errors.put(name, e.getClass().getSimpleName() + ": " + firstLine(e.getMessage()));
        System.out.printf("TPC-DS %s %s: error %s%n", backend, name, errors.get(name));
        continue;
      }
      String diff = TpchAnswers.differenceUpToTies(want, got);
      System.out.printf("TPC-DS %s %s: %s (%d rows, %.0f ms)%n", backend, name, diff == null ? "agrees" : "WRONG " + diff,
          got.size(), (System.nanoTime() - t0) / 1e6);
      if (diff == null) {
        agree.add(name);
      } else {
        wrong.put(name, diff);
      }
    }
    System.out.printf("TPC-DS %s SF%s: %d agree, %d wrong, %d errors%n", backend, SCALE, agree.size(), wrong.size(),
        errors.size());
    assertEquals(Map.of(), wrong, "wrong answers");
    Set<String> unexpected = new TreeSet<>(errors.keySet());
    unexpected.removeAll(NOT_YET);
    Set<String> nowAgree = new TreeSet<>(NOT_YET);
    nowAgree.retainAll(agree);
    assertEquals(Set.of(), unexpected, "queries that fail and are not in NOT_YET: " + errors);
    assertEquals(Set.of(), nowAgree, "queries in NOT_YET that now agree (take them off the list)");
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.lines().findFirst().orElse("");
  }
}
