package dev.gpudf.columnar.error;

/**
 * Root of gpudf's typed errors. Callers catch the subclass that matches what they can act on:
 * {@link UserException} (fix the input), {@link NotSupportedException} (use another feature),
 * {@link GpuOutOfMemoryException} (retry, spill or split), {@link InternalException} (a gpudf
 * bug), {@link DeviceFatalException} (the GPU context is unusable).
 */
public abstract class GpudfException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  protected GpudfException(String message, Throwable cause) {
    super(message, cause);
  }
}
