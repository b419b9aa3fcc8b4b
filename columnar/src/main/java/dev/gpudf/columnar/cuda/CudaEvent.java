package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.RefCounted;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/** A CUDA event: marks a point in a stream, to wait on or to time. Whoever creates it closes it. */
public final class CudaEvent extends RefCounted {
  private final CudaDevice device;
  private final CUevent event = new CUevent();

  /** A timing event when {@code timing}, else a cheaper synchronisation-only one. */
  public CudaEvent(CudaDevice device, boolean timing) {
    this.device = device;
    device.makeCurrent();
    int flags = timing ? CUevent_flags.CU_EVENT_DEFAULT : CUevent_flags.CU_EVENT_DISABLE_TIMING;
    check(JCudaDriver.cuEventCreate(event, flags), "cuEventCreate");
  }

  /** Marks the current end of {@code stream}. */
  public void record(CudaStream stream) {
    check(JCudaDriver.cuEventRecord(handle(), stream.handle()), "cuEventRecord");
  }

  /** Blocks until the recorded work has finished. */
  public void synchronize() {
    DeviceActivity.waited();
    check(JCudaDriver.cuEventSynchronize(handle()), "cuEventSynchronize");
  }

  /** True once the recorded work has finished; does not block. */
  public boolean isDone() {
    int rc = JCudaDriver.cuEventQuery(handle());
    if (rc == CUresult.CUDA_ERROR_NOT_READY) {
      return false;
    }
    check(rc, "cuEventQuery");
    return true;
  }

  /** Makes {@code stream} wait, on the device, for the work recorded in this event. */
  public void makeWait(CudaStream stream) {
    check(JCudaDriver.cuStreamWaitEvent(stream.handle(), handle(), 0), "cuStreamWaitEvent");
  }

  /** Milliseconds between {@code start} and this event; both must be timing events and done. */
  public float elapsedMillisSince(CudaEvent start) {
    float[] ms = {0};
    check(JCudaDriver.cuEventElapsedTime(ms, start.handle(), handle()), "cuEventElapsedTime");
    return ms[0];
  }

  CUevent handle() {
    checkOpen();
    return event;
  }

  @Override
  protected void release() {
    device.makeCurrent();
    check(JCudaDriver.cuEventDestroy(event), "cuEventDestroy");
  }
}
