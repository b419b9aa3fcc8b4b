package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.CudaStream;

/**
 * Calls an operation until the JIT has compiled the Java around its kernels: 10,000 times, or for
 * about two seconds when one call is slow. The optimizing compiler takes over a method after
 * thousands of calls: after 50 warm-up calls the host work around a 0.2 ms sum still took about
 * 0.15 ms (interpreted), after a few hundred about 0.03 ms.
 */
final class JitWarmUp {
  private JitWarmUp() {}

  static void run(CudaStream stream, Runnable op) {
    op.run();  // the first call loads kernels and allocates: no estimate of the others
    stream.synchronize();
    long t0 = System.nanoTime();
    op.run();
    stream.synchronize();
    long first = Math.max(1, System.nanoTime() - t0);
    long calls = Math.min(10_000, 2_000_000_000L / first);
    for (long i = 0; i < calls; i++) {
      op.run();
    }
    stream.synchronize();
  }
}
