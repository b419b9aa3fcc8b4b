package dev.gpudf.spark;

import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * gpudf's backend in one Spark JVM (an executor, or the driver in local mode): the host memory its
 * operators run in and, for the {@code gpu} backend, the device, started once by {@link
 * GpudfPlugin} or by the first operator that runs, and closed when the executor shuts down. Each
 * task takes a child allocator of it, which fails its close on anything the task leaves behind,
 * and on the GPU a stream of its own; the tasks of one executor share the device's memory pool.
 */
public final class GpudfBackend {
  /** Spark configuration naming the backend: {@code cpu} (the default) or {@code gpu}. */
  public static final String BACKEND_CONF = "spark.gpudf.backend";

  private static GpudfBackend running;

  private final RootAllocator allocator = new RootAllocator();
  private final String name;
  private final Gpu gpu;
  private final java.util.concurrent.atomic.AtomicLong deviceBatches = new java.util.concurrent.atomic.AtomicLong();

  private GpudfBackend(String name, int ordinal) {
    try {
      this.gpu = switch (name) {
        case "cpu" -> null;
        case "gpu" -> Gpu.open(ordinal);
        default -> throw new UserException(BACKEND_CONF + "=" + name + ": the backends are cpu and gpu");
      };
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    this.name = name;
  }

  /**
   * Starts the backend {@code name} in this JVM, once, on the GPU of ordinal {@code ordinal} (the
   * one Spark's resource scheduling gave the executor) for {@code gpu}; a second start with another
   * name is an error.
   */
  public static synchronized GpudfBackend start(String name, int ordinal) {
    if (running == null) {
      running = new GpudfBackend(name, ordinal);
    } else if (!running.name.equals(name)) {
      throw new IllegalStateException("gpudf's " + running.name + " backend runs in this JVM already, not " + name);
    }
    return running;
  }

  /** This JVM's backend, started with the default ({@code cpu}) when nothing started it. */
  static synchronized GpudfBackend get() {
    return running != null ? running : start("cpu", 0);
  }

  /** Stops the backend: its memory must all be back (a leak fails here), then the device is closed. */
  static synchronized void stop() {
    if (running != null) {
      GpudfBackend b = running;
      running = null;
      try (Gpu g = b.gpu; RootAllocator a = b.allocator) {
        // the allocator first (it checks for leaks), then the device
      }
    }
  }

  /** The backend's name: {@code cpu} or {@code gpu}. */
  String name() {
    return name;
  }

  /** A task's execution context on this backend, over an allocator of its own, both of which the task closes. */
  Exec taskExec(String task) {
    BufferAllocator a = allocator.newChildAllocator(task, 0, Long.MAX_VALUE);
    return gpu == null ? Exec.onCpu(a) : Exec.onGpu(gpu, a);
  }

  /** Counts a batch its tasks copied to the device (one per operator input on the GPU backend). */
  void copiedToDevice() {
    deviceBatches.incrementAndGet();
  }

  /** Batches its tasks copied to the device since it started (0 on the CPU). */
  long deviceBatches() {
    return deviceBatches.get();
  }

  /** Bytes held now by all tasks (for tests: 0 once every task completed). */
  long allocatedBytes() {
    return allocator.getAllocatedMemory();
  }
}
