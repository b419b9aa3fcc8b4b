package dev.gpudf.sql;

import dev.gpudf.columnar.error.QueryCancelledException;

/**
 * How one query can be stopped: by {@link #cancel} from another thread (a client's
 * CancelFlightInfo, JDBC's {@code Statement.cancel}), or by its time limit. The query checks it
 * before each operator runs ({@link QueryContext}), so it stops within one operator's time and
 * releases what it holds as any failed query does.
 */
public final class Cancellation {
  /** Every query's time limit unless its caller sets one: {@code -Dgpudf.limits.querySeconds} (0, the default: none). */
  public static final long DEFAULT_LIMIT_SECONDS = Long.getLong("gpudf.limits.querySeconds", 0);

  private final long limitNanos;
  private final long deadline;
  private volatile boolean cancelled;

  private Cancellation(long limitSeconds) {
    this.limitNanos = limitSeconds * 1_000_000_000L;
    this.deadline = limitSeconds > 0 ? System.nanoTime() + limitNanos : Long.MAX_VALUE;
  }

  /** A query's cancellation with the default time limit, its clock started now. */
  public static Cancellation start() {
    return new Cancellation(DEFAULT_LIMIT_SECONDS);
  }

  /** A query's cancellation with a time limit of {@code seconds} (0: none), its clock started now. */
  public static Cancellation withLimit(long seconds) {
    if (seconds < 0) {
      throw new IllegalArgumentException("a time limit is not negative: " + seconds);
    }
    return new Cancellation(seconds);
  }

  /** Asks the query to stop at its next operator. */
  public void cancel() {
    cancelled = true;
  }

  /** Throws {@link QueryCancelledException} when the query was cancelled or is past its limit. */
  public void check() {
    if (cancelled) {
      throw new QueryCancelledException("the query was cancelled", false);
    }
    if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline > 0) {
      throw new QueryCancelledException("the query ran past its time limit of " + limitNanos / 1_000_000_000L
          + " s (gpudf.limits.querySeconds)", true);
    }
  }
}
