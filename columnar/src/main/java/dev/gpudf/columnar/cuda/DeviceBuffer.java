package dev.gpudf.columnar.cuda;

import dev.gpudf.columnar.RefCounted;
import jcuda.driver.CUdeviceptr;

/**
 * A block of device memory from a {@link DeviceMemoryPool}, a view of memory another process
 * exported ({@link DeviceIpc}), or a {@linkplain #slice slice} of another buffer. Whoever allocated it (or retained it) closes it; the last close
 * returns the block to its owner, ordered after the work already queued on the buffer's stream,
 * so a kernel still reading it is never overtaken.
 */
public final class DeviceBuffer extends RefCounted {
  /** Where a buffer's memory goes back on its last close. */
  interface Owner {
    /** Takes back {@code address}; the owner closes {@code stream}, which the buffer retained. */
    void free(long address, CudaStream stream);
  }

  private final Owner owner;
  private final long address;
  private final long size;
  private final CudaStream stream;

  DeviceBuffer(Owner owner, long address, long size, CudaStream stream) {
    this.owner = owner;
    this.address = address;
    this.size = size;
    this.stream = stream;
  }

  /** Device address of the first byte; 256-byte aligned. */
  public long address() {
    checkOpen();
    return address;
  }

  /** Size asked for, in bytes (the block behind it may be larger). */
  public long size() {
    return size;
  }

  /** The stream the buffer was allocated on; its free is ordered on this stream. */
  public CudaStream stream() {
    return stream;
  }

  /** A JCuda pointer to the first byte, for driver calls. */
  public CUdeviceptr pointer() {
    return Pointers.device(address());
  }

  /**
   * A view of {@code size} bytes at device address {@code address}, memory gpudf does not own (a
   * producer's, handed over through the Arrow C Device Data Interface), for use on {@code stream};
   * its last close waits for the stream's work and then closes {@code owner}, which gives the
   * memory back to its producer. The caller closes the view; the view holds a reference to {@code stream}.
   */
  public static DeviceBuffer foreign(long address, long size, CudaStream stream, RefCounted owner) {
    if (size < 0) {
      throw new IllegalArgumentException("a buffer of " + size + " bytes");
    }
    owner.retain();
    stream.retain();
    return new DeviceBuffer((a, s) -> {
      try {
        s.synchronize();
      } finally {
        s.close();
        owner.close();
      }
    }, address, size, stream);
  }

  /**
   * A view of {@code bytes} bytes from {@code offset} of this buffer, on its stream, holding a
   * reference to it until the view's last close; the caller closes the view.
   */
  public DeviceBuffer slice(long offset, long bytes) {
    checkOpen();
    if (offset < 0 || bytes < 0 || offset > size - bytes) {
      throw new IllegalArgumentException("bytes [" + offset + ", " + offset + " + " + bytes + ") of " + this);
    }
    retain();
    stream.retain();
    return new DeviceBuffer((a, s) -> {
      s.close();
      close();
    }, address + offset, bytes, stream);
  }

  @Override
  protected void release() {
    owner.free(address, stream);
  }

  @Override
  public String toString() {
    return String.format("DeviceBuffer[0x%x, %,d bytes]", address, size);
  }
}
