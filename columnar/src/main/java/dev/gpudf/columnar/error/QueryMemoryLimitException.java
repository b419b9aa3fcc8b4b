package dev.gpudf.columnar.error;

/**
 * A query needed more memory than its own limit allows: device memory on the query's stream, or
 * the host (Arrow) memory it allocated. Not retried by spilling: other queries' and the tables'
 * memory is not the query's to take. The query's memory is released as for any failed query;
 * raising the limit, or narrowing the query, fixes it.
 */
public final class QueryMemoryLimitException extends GpudfException {
  private static final long serialVersionUID = 1L;

  /** Which memory a limit bounds. */
  public enum Kind { DEVICE, HOST }

  private final Kind kind;
  private final long limitBytes;

  private QueryMemoryLimitException(Kind kind, long limitBytes, String message) {
    super(message, null);
    this.kind = kind;
    this.limitBytes = limitBytes;
  }

  /** An allocation of {@code requestedBytes} on a query's stream that already held {@code usedBytes}. */
  public static QueryMemoryLimitException device(long requestedBytes, long usedBytes, long limitBytes, String setting) {
    return new QueryMemoryLimitException(Kind.DEVICE, limitBytes, String.format("the query needs more device memory than"
        + " its limit of %,d bytes: %,d more bytes were asked for with %,d in use (%s)", limitBytes, requestedBytes,
        usedBytes, setting));
  }

  /**
   * Host memory past the limit; Arrow's allocator does not say how much the failed request was,
   * so the message gives the most the query held before it.
   */
  public static QueryMemoryLimitException host(long peakBytes, long limitBytes, String setting) {
    return new QueryMemoryLimitException(Kind.HOST, limitBytes, String.format("the query needs more host memory than its"
        + " limit of %,d bytes: it held up to %,d bytes when an allocation did not fit (%s)", limitBytes, peakBytes,
        setting));
  }

  public Kind kind() {
    return kind;
  }

  public long limitBytes() {
    return limitBytes;
  }
}
