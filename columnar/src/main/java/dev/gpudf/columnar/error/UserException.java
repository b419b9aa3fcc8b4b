package dev.gpudf.columnar.error;

/** The caller's input is wrong (bad argument, mismatched lengths, unknown column); fixing the input fixes the error. */
public class UserException extends GpudfException {
  private static final long serialVersionUID = 1L;

  public UserException(String message) {
    super(message, null);
  }

  public UserException(String message, Throwable cause) {
    super(message, cause);
  }
}
