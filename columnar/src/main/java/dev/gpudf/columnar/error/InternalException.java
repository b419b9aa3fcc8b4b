package dev.gpudf.columnar.error;

/** A gpudf bug or a CUDA call that failed where it should not; the message names the call and the CUDA error. */
public class InternalException extends GpudfException {
  private static final long serialVersionUID = 1L;

  public InternalException(String message) {
    super(message, null);
  }

  public InternalException(String message, Throwable cause) {
    super(message, cause);
  }
}
