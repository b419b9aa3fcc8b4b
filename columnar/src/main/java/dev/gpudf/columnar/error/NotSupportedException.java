package dev.gpudf.columnar.error;

/** The input is valid but gpudf does not implement it (an Arrow type, an operation); never answered with a wrong result. */
public class NotSupportedException extends GpudfException {
  private static final long serialVersionUID = 1L;

  public NotSupportedException(String message) {
    super(message, null);
  }

  public NotSupportedException(String message, Throwable cause) {
    super(message, cause);
  }
}
