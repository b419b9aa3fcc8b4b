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
  /**
   * Spark configuration: how many of an executor's tasks run gpudf work at once (0, the default:
   * as many as Spark runs); the others wait their turn, so that the device's memory holds the
   * working sets of that many tasks, not of all.
   */
  public static final String CONCURRENT_TASKS_CONF = "spark.gpudf.concurrentTasks";
  /**
   * Spark configuration, GPU backend: the tasks' host tables in page-locked memory ({@code true},
   * the default), so that they go to and from the device by DMA on each task's stream; with {@code
   * false}, ordinary memory, and each copy goes through the device's one staging buffer, one task at
   * a time.
   */
  public static final String PINNED_CONF = "spark.gpudf.pinnedHostMemory";

  private static GpudfBackend running;

  private final RootAllocator allocator = new RootAllocator();
  private final String name;
  private final Gpu gpu;
  private final java.util.concurrent.atomic.AtomicLong tasks = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong keptOnDevice = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong deviceBatches = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong hostBatches = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong splitsToSpark = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong groupsSkipped = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong bytesToDevice = new java.util.concurrent.atomic.AtomicLong();
  /** Null: no cap. */
  private final java.util.concurrent.Semaphore turns;
  private final java.util.concurrent.atomic.AtomicInteger working = new java.util.concurrent.atomic.AtomicInteger();
  private final java.util.concurrent.atomic.AtomicInteger mostWorking = new java.util.concurrent.atomic.AtomicInteger();
  /** Where the tasks' host tables live: {@link #allocator}, or the device's pinned allocator. */
  private final BufferAllocator hostMemory;

  private GpudfBackend(String name, int ordinal, int concurrentTasks, boolean pinned) {
    try {
      if (concurrentTasks < 0) {
        throw new UserException(CONCURRENT_TASKS_CONF + "=" + concurrentTasks + " must be 0 (no cap) or more");
      }
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
    this.hostMemory = gpu != null && pinned ? gpu.pinnedAllocator() : allocator;
    this.turns = concurrentTasks == 0 ? null : new java.util.concurrent.Semaphore(concurrentTasks, true);
  }

  /**
   * Starts the backend {@code name} in this JVM, once, on the GPU of ordinal {@code ordinal} (the
   * one Spark's resource scheduling gave the executor) for {@code gpu}, with at most {@code
   * concurrentTasks} tasks working at once (0: no cap), host tables in pinned memory where {@code
   * pinned} (GPU only); a second start with another name is an error.
   */
  public static synchronized GpudfBackend start(String name, int ordinal, int concurrentTasks, boolean pinned) {
    if (running == null) {
      running = new GpudfBackend(name, ordinal, concurrentTasks, pinned);
    } else if (!running.name.equals(name)) {
      throw new IllegalStateException("gpudf's " + running.name + " backend runs in this JVM already, not " + name);
    }
    return running;
  }

  /** This JVM's backend, started with the default ({@code cpu}) when nothing started it. */
  static synchronized GpudfBackend get() {
    return running != null ? running : start("cpu", 0, 0, true);
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
    tasks.incrementAndGet();
    BufferAllocator a = hostMemory.newChildAllocator(task, 0, Long.MAX_VALUE);
    return gpu == null ? Exec.onCpu(a) : Exec.onGpu(gpu, a);
  }

  /**
   * {@code work}'s result, computed in one of the backend's turns: it waits while {@value
   * #CONCURRENT_TASKS_CONF} tasks work (interruptible, as Spark cancels a task by interrupting it).
   */
  <T> T inTurn(java.util.function.Supplier<T> work) {
    if (turns != null) {
      try {
        turns.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new dev.gpudf.columnar.error.QueryCancelledException("a gpudf task was interrupted waiting its turn", false);
      }
    }
    try {
      mostWorking.accumulateAndGet(working.incrementAndGet(), Math::max);
      return work.get();
    } finally {
      working.decrementAndGet();
      if (turns != null) {
        turns.release();
      }
    }
  }

  /** The most tasks that worked at once since the backend started (for tests: at most the cap). */
  int mostWorking() {
    return mostWorking.get();
  }

  /** The task operators that ran on the backend since it started (one per {@link #taskExec}). */
  long tasks() {
    return tasks.get();
  }

  /** Counts a batch that ran on the CPU because the device had no memory for it. */
  void ranOnHost() {
    hostBatches.incrementAndGet();
  }

  /** Batches that ran on the CPU for want of device memory since the backend started. */
  long hostBatches() {
    return hostBatches.get();
  }

  /** Counts a file split a gpudf Parquet scan left to Spark's reader. */
  void splitLeftToSpark() {
    splitsToSpark.incrementAndGet();
  }

  /** File splits gpudf Parquet scans left to Spark's reader since the backend started. */
  long splitsLeftToSpark() {
    return splitsToSpark.get();
  }

  /** Counts a Parquet row group a gpudf scan skipped by its statistics. */
  void rowGroupSkipped() {
    groupsSkipped.incrementAndGet();
  }

  /** Parquet row groups gpudf scans skipped by their statistics since the backend started. */
  long rowGroupsSkipped() {
    return groupsSkipped.get();
  }

  /** The device, or null on the CPU backend (for tests: its pool's fault injection). */
  Gpu gpu() {
    return gpu;
  }

  /** Counts a batch one gpudf operator left on the device and the next took there, with no copy. */
  void keptOnDevice() {
    keptOnDevice.incrementAndGet();
  }

  /** Batches passed from one gpudf operator to the next on the device since the backend started. */
  long batchesKeptOnDevice() {
    return keptOnDevice.get();
  }

  /** Counts a batch of {@code bytes} its tasks copied to the device (one per operator input on the GPU backend). */
  void copiedToDevice(long bytes) {
    deviceBatches.incrementAndGet();
    bytesToDevice.addAndGet(bytes);
  }

  /** Batches its tasks copied to the device since it started (0 on the CPU). */
  long deviceBatches() {
    return deviceBatches.get();
  }

  /** Bytes its tasks copied to the device since it started (Arrow buffers, as the host held them). */
  long bytesToDevice() {
    return bytesToDevice.get();
  }

  /** Bytes held now by all tasks (for tests: 0 once every task completed). */
  long allocatedBytes() {
    return allocator.getAllocatedMemory() + (hostMemory == allocator ? 0 : hostMemory.getAllocatedMemory());
  }
}
