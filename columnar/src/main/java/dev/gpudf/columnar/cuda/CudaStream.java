package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.RefCounted;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * A non-blocking CUDA stream: work queued on it runs in order, concurrently with other streams.
 * Whoever creates it closes it; closing waits for the queued work first.
 */
public final class CudaStream extends RefCounted {
  private final CudaDevice device;
  private final CUstream stream = new CUstream();

  public CudaStream(CudaDevice device) {
    this.device = device;
    device.makeCurrent();
    check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }

  /** The JCuda handle, for driver calls. */
  public CUstream handle() {
    checkOpen();
    return stream;
  }

  public CudaDevice device() {
    return device;
  }

  /** Blocks until all work queued so far has finished. */
  public void synchronize() {
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
