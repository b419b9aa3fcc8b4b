package dev.gpudf.columnar.error;

/** The CUDA context hit a sticky error (illegal address, launch failure, ECC); every later call on that device fails, so the process must drop it. */
public class DeviceFatalException extends GpudfException {
  private static final long serialVersionUID = 1L;

  public DeviceFatalException(String message) {
    super(message, null);
  }

  public DeviceFatalException(String message, Throwable cause) {
    super(message, cause);
  }
}
