package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.RefCounted;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * A non-blocking CUDA stream: work queued on it runs in order, concurrently with other streams.
 * Whoever creates it closes it; closing waits for the queued work first. A stream may bound the
 * device memory allocated on it ({@link #limitMemory}): each query runs on a stream of its own,
 * so that bound is the query's memory limit.
 */
public final class CudaStream extends RefCounted {
  private final CudaDevice device;
  private final CUstream stream = new CUstream();
  // kept by the DeviceMemoryPool, under its lock: the live bytes allocated on this stream and their bound (0: none)
  long memoryLimit;
  long memoryUsed;
  String memoryLimitSource;

  public CudaStream(CudaDevice device) {
    this.device = device;
    device.makeCurrent();
    check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    DeviceActivity.streamCreated();
  }

  /** The JCuda handle, for driver calls. */
  public CUstream handle() {
    checkOpen();
    return stream;
  }

  public CudaDevice device() {
    return device;
  }

  /**
   * Bounds the device memory live on this stream at once to {@code bytes} (0: no bound); an
   * allocation past it fails with {@link dev.gpudf.columnar.error.QueryMemoryLimitException},
   * whose message names {@code source} (the setting a user changes). Set before the first
   * allocation on the stream.
   */
  public void limitMemory(long bytes, String source) {
    if (bytes < 0) {
      throw new IllegalArgumentException("a memory limit is not negative: " + bytes);
    }
    memoryLimit = bytes;
    memoryLimitSource = source;
  }

  /**
   * Makes the work queued here from now on wait for {@code event}, a {@code CUevent} handle
   * another library recorded (the sync event of an Arrow C Device array): its producer's work
   * on the memory it hands over comes first.
   */
  public void waitFor(long event) {
    device.makeCurrent();
    check(JCudaDriver.cuStreamWaitEvent(handle(), new ForeignEvent(event), 0), "cuStreamWaitEvent");
  }

  /** A {@code CUevent} for a handle made outside JCuda (its handle field has no setter). */
  private static final class ForeignEvent extends jcuda.driver.CUevent {
    ForeignEvent(long handle) {
      try {
        java.lang.reflect.Field f = jcuda.NativePointerObject.class.getDeclaredField("nativePointer");
        f.setAccessible(true);
        f.setLong(this, handle);
      } catch (ReflectiveOperationException e) {
        throw new dev.gpudf.columnar.error.InternalException("this JCuda's CUevent cannot take a handle", e);
      }
    }
  }

  /** Blocks until all work queued so far has finished. */
  public void synchronize() {
    DeviceActivity.waited();
    device.makeCurrent();
    check(JCudaDriver.cuStreamSynchronize(handle()), "cuStreamSynchronize");
  }

  @Override
  protected void release() {
    device.makeCurrent();
    check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize");
    check(JCudaDriver.cuStreamDestroy(stream), "cuStreamDestroy");
  }
}
