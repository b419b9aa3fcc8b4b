package dev.gpudf.columnar.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Raw addresses to and from JCuda pointer objects. gpudf keeps addresses as {@code long}s (as
 * Arrow does) and builds JCuda pointers only at the driver call.
 */
public final class Pointers {
  private Pointers() {}

  /** A device pointer for a raw device address. */
  public static CUdeviceptr device(long address) {
    return new CUdeviceptr().withByteOffset(address);
  }

  /** A host pointer for a raw host address (native memory, not a Java array). */
  public static Pointer host(long address) {
    return new Pointer().withByteOffset(address);
  }

  /** A JCuda host pointer whose address the driver writes and this class reads back. */
  static final class HostOut extends Pointer {
    long address() {
      return getNativePointer() + getByteOffset();
    }
  }

  /** A JCuda device pointer whose address the driver writes and this class reads back. */
  static final class DeviceOut extends CUdeviceptr {
    long address() {
      return getNativePointer() + getByteOffset();
    }
  }
}
