package dev.gpudf.columnar.error;

/**
 * Root of gpudf's typed errors. Callers catch the subclass that matches what they can act on:
 * {@link UserException} (fix the input), {@link NotSupportedException} (use another feature),
 * {@link GpuOutOfMemoryException} (retry, spill or split), {@link InternalException} (a gpudf
 * bug), {@link DeviceFatalException} (the GPU context is unusable).
 */
public abstract class GpudfException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  /** Longest message kept: messages quote their input (a name, a statement), which a client may make huge. */
  public static final int MAX_MESSAGE_CHARS = 2000;

  protected GpudfException(String message, Throwable cause) {
    super(bounded(message), cause);
  }

  /** {@code message} cut in its middle to {@link #MAX_MESSAGE_CHARS}, so errors and the log lines of them stay small. */
  static String bounded(String message) {
    if (message == null || message.length() <= MAX_MESSAGE_CHARS) {
      return message;
    }
    int keep = MAX_MESSAGE_CHARS / 2;
    return message.substring(0, keep) + " ... (" + (message.length() - 2 * keep) + " characters left out) ... "
        + message.substring(message.length() - keep);
  }
}
