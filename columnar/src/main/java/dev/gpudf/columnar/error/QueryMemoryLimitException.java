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

  public QueryMemoryLimitException(Kind kind, long requestedBytes, long usedBytes, long limitBytes, String setting) {
    super(String.format("the query needs more %s memory than its limit of %,d bytes: %,d more bytes were asked for with %,d"
        + " in use (%s)", kind == Kind.DEVICE ? "device" : "host", limitBytes, requestedBytes, usedBytes, setting), null);
    this.kind = kind;
    this.limitBytes = limitBytes;
  }

  public Kind kind() {
    return kind;
  }

  public long limitBytes() {
    return limitBytes;
  }
}
