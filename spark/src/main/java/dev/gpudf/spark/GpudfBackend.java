package dev.gpudf.spark;

import dev.gpudf.columnar.error.NotSupportedException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * gpudf's backend in one Spark JVM (an executor, or the driver in local mode): the memory its
 * operators run in (a device to come), started once by {@link GpudfPlugin} or by the first
 * operator that runs, and closed when the executor shuts down. Each task takes a child allocator of
 * it, which fails its close on anything the task leaves behind.
 */
public final class GpudfBackend {
  /** Spark configuration naming the backend: {@code cpu} (the default). */
  public static final String BACKEND_CONF = "spark.gpudf.backend";

  private static GpudfBackend running;

  private final RootAllocator allocator = new RootAllocator();
  private final String name;

  private GpudfBackend(String name) {
    if (!name.equals("cpu")) {
      allocator.close();
      throw new NotSupportedException(BACKEND_CONF + "=" + name + ": only the cpu backend runs in Spark so far");
    }
    this.name = name;
  }

  /** Starts the backend {@code name} in this JVM, once; a second start with another name is an error. */
  public static synchronized GpudfBackend start(String name) {
    if (running == null) {
      running = new GpudfBackend(name);
    } else if (!running.name.equals(name)) {
      throw new IllegalStateException("gpudf's " + running.name + " backend runs in this JVM already, not " + name);
    }
    return running;
  }

  /** This JVM's backend, started with the default ({@code cpu}) when nothing started it. */
  static synchronized GpudfBackend get() {
    return running != null ? running : start("cpu");
  }

  /** Stops the backend: its memory must all be back (a leak fails here). */
  static synchronized void stop() {
    if (running != null) {
      GpudfBackend b = running;
      running = null;
      b.allocator.close();
    }
  }

  /** A task's own allocator, which the task closes when it completes. */
  BufferAllocator taskAllocator(String name) {
    return allocator.newChildAllocator(name, 0, Long.MAX_VALUE);
  }

  /** Bytes held now by all tasks (for tests: 0 once every task completed). */
  long allocatedBytes() {
    return allocator.getAllocatedMemory();
  }
}
