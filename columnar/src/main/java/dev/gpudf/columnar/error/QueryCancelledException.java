package dev.gpudf.columnar.error;

/**
 * A query stopped before its end: cancelled by its client, or past its time limit ({@link
 * #timedOut}). Work it started on a device has finished or been dropped; nothing it made is kept.
 */
public final class QueryCancelledException extends GpudfException {
  private static final long serialVersionUID = 1L;
  private final boolean timedOut;

  public QueryCancelledException(String message, boolean timedOut) {
    super(message, null);
    this.timedOut = timedOut;
  }

  /** Whether the query ran past its time limit (else its client cancelled it). */
  public boolean timedOut() {
    return timedOut;
  }
}
