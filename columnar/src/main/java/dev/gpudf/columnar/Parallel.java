package dev.gpudf.columnar;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * Work over native memory spread on the common fork-join pool, safely: an exception never leaves
 * a worker while others still run. (A parallel stream rethrows a worker's exception at once, while
 * other workers still read the inputs that the caller then frees: native memory read, or written,
 * after its release.)
 */
public final class Parallel {
  private Parallel() {}

  /**
   * {@code body} for each of 0 .. n - 1, {@code before} ahead of each (a query's cancellation
   * check, say). Neither that nor the body that throws is thrown from a worker: the items not yet
   * begun are skipped, and the first exception is rethrown here once every item that began has ended.
   */
  public static void forEach(int n, Runnable before, IntConsumer body) {
    AtomicReference<RuntimeException> stopped = new AtomicReference<>();
    IntStream.range(0, n).parallel().forEach(i -> {
      if (stopped.get() != null) {
        return;
      }
      try {
        before.run();
        body.accept(i);
      } catch (RuntimeException e) {
        stopped.compareAndSet(null, e);
      }
    });
    if (stopped.get() != null) {
      throw stopped.get();
    }
  }
}
