package dev.gpudf.spark;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.execution.SQLExecution$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd;

/**
 * The shuffles of one query's {@link GpudfShuffleExchangeExec}s, by their canonical plans: two
 * exchanges of one query that compute the same rows (TPC-H q15's view, read by the query and by its
 * subquery) share one shuffle, run once, as Spark's {@code ReusedExchange} does for Spark's
 * exchanges (its rule passes a gpudf exchange by: it is not of Spark's exchange type). A query is
 * its root SQL execution, whose subqueries run under it; its entries go when it ends. Outside an
 * SQL execution nothing is shared.
 */
final class ExchangeReuse {
  private static final Map<String, Map<SparkPlan, ShuffleDependency<Object, byte[], byte[]>>> BY_QUERY = new HashMap<>();
  // the contexts whose end-of-query events clear their queries' entries
  private static final java.util.Set<SparkContext> LISTENING =
      java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>());
  private static long shared;

  private ExchangeReuse() {}

  /** The query that {@code sc}'s current thread runs: its root execution id, or null outside one. */
  private static String query(SparkContext sc) {
    String root = sc.getLocalProperty(SQLExecution$.MODULE$.EXECUTION_ROOT_ID_KEY());
    return root != null ? root : sc.getLocalProperty(SQLExecution$.MODULE$.EXECUTION_ID_KEY());
  }

  /** The shuffle another exchange of the current query made for {@code canonical}, or null. */
  static synchronized ShuffleDependency<Object, byte[], byte[]> find(SparkContext sc, SparkPlan canonical) {
    String q = query(sc);
    Map<SparkPlan, ShuffleDependency<Object, byte[], byte[]>> mine = q == null ? null : BY_QUERY.get(q);
    ShuffleDependency<Object, byte[], byte[]> found = mine == null ? null : mine.get(canonical);
    if (found != null) {
      shared++;
    }
    return found;
  }

  /** Keeps {@code dependency}, the shuffle of {@code canonical}, for the current query's other exchanges. */
  static synchronized void remember(SparkContext sc, SparkPlan canonical, ShuffleDependency<Object, byte[], byte[]> dependency) {
    String q = query(sc);
    if (q == null) {
      return;
    }
    if (LISTENING.add(sc)) {
      sc.addSparkListener(new SparkListener() {
        @Override
        public void onOtherEvent(SparkListenerEvent event) {
          if (event instanceof SparkListenerSQLExecutionEnd end) {
            forget(String.valueOf(end.executionId()));
          }
        }
      });
    }
    BY_QUERY.computeIfAbsent(q, k -> new HashMap<>()).putIfAbsent(canonical, dependency);
  }

  private static synchronized void forget(String query) {
    BY_QUERY.remove(query);
  }

  /** How many exchanges took another's shuffle since the JVM started (for tests). */
  static synchronized long shared() {
    return shared;
  }

  /** The queries holding shuffles now (for tests: none once every query has ended). */
  static synchronized int queries() {
    return BY_QUERY.size();
  }
}
