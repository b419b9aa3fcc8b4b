package dev.gpudf.kernels;

import static dev.gpudf.columnar.cuda.Cuda.check;

import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceActivity;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.JCudaDriver;

/**
 * Launches a {@code *_kernel} entry point with grid-stride sizing and checks the launch. With
 * {@code -Dgpudf.debug.syncLaunches=true} every launch is followed by a stream synchronise, so
 * an asynchronous fault is reported at the kernel that caused it. With {@code
 * -Dgpudf.debug.profileLaunches=true} each launch is also timed (synchronised before and after),
 * per kernel name, for {@link #takeProfile}.
 */
public final class KernelLaunch {
  /** Threads per block for the grid-stride kernels. */
  public static final int BLOCK = 256;
  private static final boolean SYNC = Boolean.getBoolean("gpudf.debug.syncLaunches");
  private static final boolean PROFILE = Boolean.getBoolean("gpudf.debug.profileLaunches");
  private static final java.util.Map<String, long[]> PROFILE_NANOS = new java.util.concurrent.ConcurrentHashMap<>();

  private KernelLaunch() {}

  /** Blocks for {@code work} items: enough to fill the device, never more than the work needs. */
  public static int gridFor(CudaDevice device, long work) {
    long needed = Math.max(1, (work + BLOCK - 1) / BLOCK);
    return (int) Math.min(needed, device.multiprocessors() * 8L);
  }

  /**
   * Blocks for {@code work} items of {@code kernel}, which grid-strides: at most one full wave of
   * resident blocks, so no partial last wave leaves multiprocessors idle while the rest finish.
   */
  public static int residentGridFor(CudaDevice device, String kernel, long work) {
    return residentGridFor(device, KernelModule.on(device).residentBlocksPerMultiprocessor(kernel, BLOCK), work);
  }

  /** {@link #residentGridFor(CudaDevice, String, long)} for a kernel of which a multiprocessor holds {@code residentBlocks}. */
  static int residentGridFor(CudaDevice device, int residentBlocks, long work) {
    long needed = Math.max(1, (work + BLOCK - 1) / BLOCK);
    return (int) Math.min(needed, (long) device.multiprocessors() * residentBlocks);
  }

  /**
   * Launches {@code kernel} on {@code stream}. Arguments: {@link DeviceBuffer} (passed as its
   * address; null passes a null pointer), {@link Long}, {@link Integer}, {@link Double}, {@link Float},
   * and a {@link java.nio.ByteBuffer} for a struct passed by value (its bytes from position to
   * limit, in the kernel's layout and byte order).
   */
  public static void launch(String kernel, int grid, CudaStream stream, Object... args) {
    launch(kernel, grid, BLOCK, stream, args);
  }

  /** {@link #launch(String, int, CudaStream, Object...)} with {@code block} threads per block (a kernel built for another size). */
  public static void launch(String kernel, int grid, int block, CudaStream stream, Object... args) {
    launch(KernelModule.on(stream.device()).function(kernel), kernel, grid, block, stream, args);
  }

  /** Launches a generated kernel (profiled under {@link PtxProgram#ENTRY}). */
  static void launch(GeneratedKernels.Kernel kernel, int grid, CudaStream stream, Object... args) {
    launch(kernel.function(), PtxProgram.ENTRY, grid, BLOCK, stream, args);
  }

  /** Most arguments a kernel takes. */
  static final int MAX_ARGS = 32;

  /** Most bytes of by-value struct arguments one launch takes (CUDA's parameter space is 4 KiB). */
  static final int MAX_STRUCT_BYTES = 2048;

  /**
   * One thread's kernel arguments, laid out in native memory as {@code cuLaunchKernel} reads
   * them: {@link #MAX_ARGS} pointers, each to its own 8-byte value slot after them, then room for
   * structs passed by value. The driver copies the values during the call, so the same memory
   * serves every launch of the thread, and a launch costs no Java array per argument (JCuda pins
   * and copies back each array it is given, which made a launch cost more than the driver's own work).
   */
  private static final class Arguments {
    final java.nio.ByteBuffer slots = java.nio.ByteBuffer.allocateDirect(16 * MAX_ARGS + MAX_STRUCT_BYTES)
        .order(java.nio.ByteOrder.nativeOrder());
    final Pointer pointer = Pointer.to(slots);
    final long address = org.apache.arrow.memory.util.MemoryUtil.getByteBufferAddress(slots);
    /** Where the next struct of this launch goes: after the value slots, 16-byte aligned. */
    int structAt;

    void begin() {
      structAt = 16 * MAX_ARGS;
    }

    void set(int i, Object a) {
      int at = 8 * (MAX_ARGS + i);
      slots.putLong(8 * i, address + at);
      slots.putLong(at, 0);
      if (a == null) {
        return;
      }
      if (a instanceof java.nio.ByteBuffer struct) {
        int bytes = struct.remaining();
        if (structAt + bytes > slots.capacity()) {
          throw new IllegalArgumentException("kernel struct arguments over " + MAX_STRUCT_BYTES + " bytes");
        }
        slots.put(structAt, struct, struct.position(), bytes);
        slots.putLong(8 * i, address + structAt);
        structAt += (bytes + 15) & ~15;
      } else if (a instanceof DeviceBuffer b) {
        slots.putLong(at, b.address());
      } else if (a instanceof Long l) {
        slots.putLong(at, l);
      } else if (a instanceof Integer n) {
        slots.putInt(at, n);
      } else if (a instanceof Double d) {
        slots.putDouble(at, d);
      } else if (a instanceof Float f) {
        slots.putFloat(at, f);
      } else {
        throw new IllegalArgumentException("unsupported kernel argument " + a);
      }
    }
  }

  private static final ThreadLocal<Arguments> ARGUMENTS = ThreadLocal.withInitial(Arguments::new);

  private static void launch(CUfunction function, String kernel, int grid, int block, CudaStream stream, Object... args) {
    CudaDevice device = stream.device();
    if (args.length > MAX_ARGS) {
      throw new IllegalArgumentException(kernel + " given " + args.length + " arguments, more than " + MAX_ARGS);
    }
    Arguments params = ARGUMENTS.get();
    params.begin();
    for (int i = 0; i < args.length; i++) {
      params.set(i, args[i]);
    }
    device.makeCurrent();
    long t0 = 0;
    if (PROFILE) {
      stream.synchronize();
      t0 = System.nanoTime();
    }
    check(JCudaDriver.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream.handle(), params.pointer, null),
        "cuLaunchKernel(" + kernel + ")");
    DeviceActivity.launched();
    if (SYNC || PROFILE) {
      stream.synchronize();
    }
    if (PROFILE) {
      long spent = System.nanoTime() - t0;
      long[] entry = PROFILE_NANOS.computeIfAbsent(kernel, k -> new long[2]);
      synchronized (entry) {
        entry[0]++;
        entry[1] += spent;
      }
    }
  }

  /**
   * Launch counts and synchronised wall nanoseconds per kernel since the last call, then clears
   * them; empty unless {@code gpudf.debug.profileLaunches} is set.
   */
  public static java.util.SortedMap<String, long[]> takeProfile() {
    java.util.SortedMap<String, long[]> out = new java.util.TreeMap<>();
    for (String k : List.copyOf(PROFILE_NANOS.keySet())) {
      long[] e = PROFILE_NANOS.remove(k);
      if (e != null) {
        synchronized (e) {
          out.put(k, e.clone());
        }
      }
    }
    return out;
  }
}
