package dev.gpudf.columnar.cuda;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.RefCounted;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.UserException;
import java.lang.reflect.Field;
import jcuda.driver.CUipcMemHandle;
import jcuda.driver.CUipcMem_flags;
import jcuda.driver.JCudaDriver;

/**
 * CUDA IPC for device buffers: another process on the same machine maps a buffer's memory
 * instead of receiving a copy. A handle names a whole driver allocation (a pool chunk, see
 * {@link DeviceMemoryPool}), so an export is (handle, offset in it); the importer maps the
 * allocation and addresses the buffer inside it. The mapping can therefore read the rest of the
 * chunk: a handle is for processes of the same user that the exporter trusts. The driver refuses
 * to open a handle in the process that made it.
 */
public final class DeviceIpc {
  /** Bytes of a CUDA IPC memory handle. */
  public static final int HANDLE_BYTES = 64;
  private static final Field RESERVED = reservedField();

  private DeviceIpc() {}

  /** Where a buffer lives in its driver allocation: that allocation's IPC handle and size, and the buffer's offset in it. */
  public record Export(byte[] handle, long allocationBase, long allocationSize, long offset) {}

  /** The IPC handle of {@code buffer}'s allocation and its offset there; the caller keeps the buffer open while the handle is in use. */
  public static Export export(DeviceBuffer buffer, CudaDevice device) {
    device.makeCurrent();
    Pointers.DeviceOut base = new Pointers.DeviceOut();
    long[] size = new long[1];
    check(JCudaDriver.cuMemGetAddressRange(base, size, buffer.pointer()), "cuMemGetAddressRange");
    CUipcMemHandle handle = new CUipcMemHandle();
    check(JCudaDriver.cuIpcGetMemHandle(handle, Pointers.device(base.address())), "cuIpcGetMemHandle");
    return new Export(bytes(handle), base.address(), size[0], buffer.address() - base.address());
  }

  /**
   * Maps the allocation another process exported as {@code handle}, said to hold {@code
   * allocationSize} bytes (more than the driver says it holds is a {@link UserException}). The mapping is reference
   * counted: the caller closes it, and every buffer made from it holds a reference of its own,
   * so the memory is unmapped when the last of them closes.
   */
  public static Mapping open(CudaDevice device, byte[] handle, long allocationSize) {
    if (handle.length != HANDLE_BYTES) {
      throw new UserException("a CUDA IPC memory handle has " + HANDLE_BYTES + " bytes, not " + handle.length);
    }
    device.makeCurrent();
    CUipcMemHandle h = new CUipcMemHandle();
    try {
      RESERVED.set(h, handle.clone());
    } catch (IllegalAccessException e) {
      throw new InternalException("cannot fill a JCuda IPC handle", e);
    }
    Pointers.DeviceOut base = new Pointers.DeviceOut();
    int opened = JCudaDriver.cuIpcOpenMemHandle(base, h, CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (opened != jcuda.driver.CUresult.CUDA_SUCCESS) {
      // the handle came from another process: one that names nothing (or this process's own
      // memory) is that process's mistake, not this one's
      throw new UserException("a CUDA IPC memory handle cannot be opened here: " + jcuda.driver.CUresult.stringFor(opened));
    }
    // the size is the other process's word: the driver's is the bound every buffer is checked against
    Pointers.DeviceOut start = new Pointers.DeviceOut();
    long[] size = new long[1];
    int rc = JCudaDriver.cuMemGetAddressRange(start, size, Pointers.device(base.address()));
    if (rc != 0 || allocationSize > size[0] || allocationSize < 0) {
      check(JCudaDriver.cuIpcCloseMemHandle(Pointers.device(base.address())), "cuIpcCloseMemHandle");
      check(rc, "cuMemGetAddressRange");
      throw new UserException("an exported allocation said to hold " + allocationSize + " bytes holds " + size[0]);
    }
    return new Mapping(device, base.address(), allocationSize, size[0]);
  }

  /** Another process's allocation mapped into this one. */
  public static final class Mapping extends RefCounted {
    private final CudaDevice device;
    private final long base;
    private final long size;
    private final long driverSize;

    private Mapping(CudaDevice device, long base, long size, long driverSize) {
      this.device = device;
      this.base = base;
      this.size = size;
      this.driverSize = driverSize;
    }

    /** The bytes the driver says the mapped allocation holds (at least the size the exporter stated). */
    public long driverSize() {
      return driverSize;
    }

    /**
     * A buffer of {@code size} bytes at {@code offset} in the mapping, for use on {@code stream};
     * the caller closes it. Its last close waits for the stream's work and releases its reference to the mapping.
     */
    public DeviceBuffer buffer(long offset, long bytes, CudaStream stream) {
      checkOpen();
      if (offset < 0 || bytes < 0 || offset + bytes > size) {
        throw new UserException(String.format("bytes [%d, %d) are outside the %d-byte exported allocation", offset,
            offset + bytes, size));
      }
      retain();
      stream.retain();
      return new DeviceBuffer((address, s) -> {
        try {
          s.synchronize();
        } finally {
          s.close();
          close();
        }
      }, base + offset, bytes, stream);
    }

    @Override
    protected void release() {
      device.makeCurrent();
      check(JCudaDriver.cuIpcCloseMemHandle(Pointers.device(base)), "cuIpcCloseMemHandle");
    }
  }

  private static byte[] bytes(CUipcMemHandle handle) {
    try {
      return ((byte[]) RESERVED.get(handle)).clone();
    } catch (IllegalAccessException e) {
      throw new InternalException("cannot read a JCuda IPC handle", e);
    }
  }

  // JCuda keeps the handle's bytes in a private field with no accessor
  private static Field reservedField() {
    try {
      Field f = CUipcMemHandle.class.getDeclaredField("reserved");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException e) {
      throw new InternalException("this JCuda's CUipcMemHandle has no 'reserved' bytes", e);
    }
  }
}
