package dev.gpudf.sql;

import org.apache.arrow.memory.RootAllocator;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.util.SqlBasicVisitor;

/**
 * Plans one query of the shapes analysts write (joins, a correlated subquery, grouped decimal
 * arithmetic, dates, CASE, LIKE, ORDER BY and LIMIT) over VALUES on a daemon thread when a
 * process opens its first session, so that the JVM has loaded and begun compiling the planner
 * (Calcite's parser, validator, converter and rules, thousands of classes) by the time the user's
 * first statement comes, often while the session is still opening its tables. The first plan of
 * a process took about a second where later ones take milliseconds (TPC-H q1 over SF1 Parquet on
 * the H200's 16-core host: 858-1,063 ms, 537-588 after the warm-up; q2 212-263 -> 70-87 ms;
 * benchmarks/results/2026-12-04-planner-warmup-sf1-gpu-s30.txt).
 * It runs in a session and allocator of its own, which it closes, plans only, and touches no
 * table; a failure is logged, never seen by a query. Off with {@code -Dgpudf.plan.warmUp=false}.
 */
final class PlannerWarmUp {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PlannerWarmUp.class);
  private static final java.util.concurrent.atomic.AtomicBoolean STARTED = new java.util.concurrent.atomic.AtomicBoolean();
  /** Fewest cores the warm-up runs on: it takes a core the session's opening would use. */
  static final int MIN_CORES = 4;

  static final String QUERY = """
      SELECT t.k, u.n, SUM(t.p * (1 - t.d) * (1 + t.x)) AS s, AVG(t.q) AS q, COUNT(*) AS c,
        SUM(CASE WHEN t.m LIKE 'A%' THEN t.p ELSE 0 END) AS a, MIN(SUBSTRING(u.n FROM 1 FOR 1)) AS f
      FROM (VALUES (1, CAST(1.5 AS DECIMAL(15, 2)), CAST(0.05 AS DECIMAL(15, 2)), CAST(0.01 AS DECIMAL(15, 2)),
          CAST(3 AS DECIMAL(15, 2)), 'AB', DATE '1998-01-01')) AS t(k, p, d, x, q, m, dt)
      JOIN (VALUES (1, 'x'), (2, 'y')) AS u(k, n) ON t.k = u.k
      WHERE t.dt <= DATE '1998-12-01' - INTERVAL '90' DAY AND t.d BETWEEN 0.05 - 0.01 AND 0.05 + 0.01
        AND EXISTS (SELECT 1 FROM (VALUES (1), (3)) AS v(k) WHERE v.k = t.k AND v.k <> u.k + 1)
        AND t.q < (SELECT AVG(w.q) * 2 FROM (VALUES (1, 3.0)) AS w(k, q) WHERE w.k = t.k)
      GROUP BY t.k, u.n
      ORDER BY s DESC, t.k
      LIMIT 10""";

  private PlannerWarmUp() {}

  /**
   * Starts the warm-up unless it ran in this process already, is turned off, or the machine has
   * fewer than {@link #MIN_CORES} cores: on 2 cores it took the opening of the tables' time (270-290
   * -> 480-520 ms for TPC-H SF1 Parquet) for what it gave the first plan (500-570 -> 320-410 ms),
   * `gpudf sql` no sooner in all.
   */
  static void startOnce() {
    if (!Boolean.parseBoolean(System.getProperty("gpudf.plan.warmUp", "true"))
        || Runtime.getRuntime().availableProcessors() < MIN_CORES || !STARTED.compareAndSet(false, true)) {
      return;
    }
    Thread t = new Thread(PlannerWarmUp::run, "gpudf-planner-warm-up");
    t.setDaemon(true);
    t.start();
  }

  private static final java.util.concurrent.atomic.AtomicBoolean DECORRELATOR = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Initializes Calcite's {@code CoreRules} on a daemon thread, once a process, when {@code parsed}
   * has a sub-query in an expression (the SELECT list, WHERE, HAVING): decorrelating one
   * initializes all of Calcite's rules there ({@code RelDecorrelator} uses them), which took 140 ms
   * of TPC-H q2's plan on the main thread of a 2-core host; validating and converting the statement
   * now overlap it. A statement without such a sub-query never initializes them, and pays nothing.
   * Off with {@code -Dgpudf.plan.warmUp=false}; a failure is left for the planner to meet and report.
   */
  static void decorrelatorSoon(SqlNode parsed) {
    if (DECORRELATOR.get() || !Boolean.parseBoolean(System.getProperty("gpudf.plan.warmUp", "true"))
        || !hasExpressionSubQuery(parsed) || !DECORRELATOR.compareAndSet(false, true)) {
      return;
    }
    // by name: the class literal would load the class on this thread
    initializeSoon("org.apache.calcite.rel.rules.CoreRules", "gpudf-decorrelator-warm-up");
  }

  /**
   * Loads and initializes class {@code name} on a daemon thread {@code thread}; a failure is
   * logged, and left for the code that needs the class to meet.
   */
  static void initializeSoon(String name, String thread) {
    Thread t = new Thread(() -> {
      try {
        Class.forName(name, true, PlannerWarmUp.class.getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        LOG.debug("{} was not initialized ahead: {}", name, e.toString());
      }
    }, thread);
    t.setDaemon(true);
    t.start();
  }

  /** Whether a query of {@code node} holds another in its SELECT list, WHERE or HAVING. */
  static boolean hasExpressionSubQuery(SqlNode node) {
    boolean[] found = {false};
    node.accept(new SqlBasicVisitor<Void>() {
      @Override
      public Void visit(SqlCall call) {
        if (!found[0] && call instanceof SqlSelect select) {
          for (SqlNode part : java.util.Arrays.asList(select.getSelectList(), select.getWhere(), select.getHaving())) {
            found[0] |= part != null && containsQuery(part);
          }
        }
        return found[0] ? null : super.visit(call);
      }
    });
    return found[0];
  }

  private static boolean containsQuery(SqlNode node) {
    boolean[] found = {false};
    node.accept(new SqlBasicVisitor<Void>() {
      @Override
      public Void visit(SqlCall call) {
        found[0] |= call.getKind().belongsTo(org.apache.calcite.sql.SqlKind.QUERY);
        return found[0] ? null : super.visit(call);
      }
    });
    return found[0];
  }

  private static void run() {
    long t0 = System.nanoTime();
    try (RootAllocator allocator = new RootAllocator(); GpuSession session = GpuSession.cpu(allocator)) {
      session.explain(QUERY);
      LOG.debug("planner warmed up in {} ms", (System.nanoTime() - t0) / 1_000_000);
    } catch (RuntimeException e) {
      LOG.warn("the planner's warm-up failed (queries are not affected): {}", e.toString());
    }
  }
}
