package dev.gpudf.sql;

import dev.gpudf.columnar.error.QueryCancelledException;

/**
 * How one query can be stopped: by {@link #cancel} from another thread (a client's
 * CancelFlightInfo, JDBC's {@code Statement.cancel}), or by its time limit. The query checks it
 * before each operator runs ({@link QueryContext}) and inside operators at each device allocation,
 * each host allocation of a query run for rows, and the long loops of the CPU twins (join probe
 * chunks, sort merge passes, group-by partitions: {@code Exec#checkpoints}), from any of the
 * query's threads; it releases what it holds as any failed query does.
 */
public final class Cancellation {
  /** Every query's time limit unless its caller sets one: {@code -Dgpudf.limits.querySeconds} (0, the default: none). */
  public static final long DEFAULT_LIMIT_SECONDS = Long.getLong("gpudf.limits.querySeconds", 0);

  private final long limitNanos;
  private final long deadline;
  private volatile boolean cancelled;
  private final java.util.function.BooleanSupplier elsewhere;

  private Cancellation(long limitSeconds, java.util.function.BooleanSupplier elsewhere) {
    if (limitSeconds < 0) {
      throw new IllegalArgumentException("a time limit is not negative: " + limitSeconds);
    }
    this.limitNanos = limitSeconds * 1_000_000_000L;
    this.deadline = limitSeconds > 0 ? System.nanoTime() + limitNanos : Long.MAX_VALUE;
    this.elsewhere = elsewhere;
  }

  /** A query's cancellation with the default time limit, its clock started now. */
  public static Cancellation start() {
    return new Cancellation(DEFAULT_LIMIT_SECONDS, () -> false);
  }

  /** A query's cancellation with a time limit of {@code seconds} (0: none), its clock started now. */
  public static Cancellation withLimit(long seconds) {
    return new Cancellation(seconds, () -> false);
  }

  /**
   * A query's cancellation that also stops it once {@code cancelledElsewhere} says so (the flag
   * JDBC's {@code Statement.cancel} sets, a Flight call its client cancelled), with a time limit of
   * {@code seconds} (0: the default limit), its clock started now. {@code cancelledElsewhere} is
   * read at each check, from any of the query's threads.
   */
  public static Cancellation following(java.util.function.BooleanSupplier cancelledElsewhere, long seconds) {
    return new Cancellation(seconds == 0 ? DEFAULT_LIMIT_SECONDS : seconds, cancelledElsewhere);
  }

  /** Asks the query to stop at its next operator. */
  public void cancel() {
    cancelled = true;
  }

  /** Throws {@link QueryCancelledException} when the query was cancelled or is past its limit. */
  public void check() {
    if (cancelled || elsewhere.getAsBoolean()) {
      throw new QueryCancelledException("the query was cancelled", false);
    }
    if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline > 0) {
      throw new QueryCancelledException("the query ran past its time limit of " + limitNanos / 1_000_000_000L
          + " s (gpudf.limits.querySeconds)", true);
    }
  }
}
