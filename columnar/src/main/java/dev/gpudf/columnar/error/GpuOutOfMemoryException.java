package dev.gpudf.columnar.error;

/**
 * Device memory could not be had: the pool limit or the device itself is exhausted. Retryable:
 * nothing was allocated and the pool stays usable, so a caller may free, spill or split and try
 * again.
 */
public class GpuOutOfMemoryException extends GpudfException {
  private static final long serialVersionUID = 1L;
  private final long requestedBytes;
  private final long allocatedBytes;
  private final long limitBytes;

  public GpuOutOfMemoryException(long requestedBytes, long allocatedBytes, long limitBytes, String detail) {
    super(String.format("GPU out of memory: requested %,d bytes with %,d allocated of a %,d byte limit (%s)",
        requestedBytes, allocatedBytes, limitBytes, detail), null);
    this.requestedBytes = requestedBytes;
    this.allocatedBytes = allocatedBytes;
    this.limitBytes = limitBytes;
  }

  public long requestedBytes() {
    return requestedBytes;
  }

  public long allocatedBytes() {
    return allocatedBytes;
  }

  public long limitBytes() {
    return limitBytes;
  }
}
