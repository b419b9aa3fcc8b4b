package dev.gpudf.bench;

import dev.gpudf.columnar.cuda.CudaStream;

/**
 * Calls an operation until the JIT has compiled the Java around its kernels: 50 times, or for
 * about two seconds when one call is slow. Timing after a single call measures the interpreter
 * (the host work around a 0.2 ms sum took about 0.1 ms then).
 */
final class JitWarmUp {
  private JitWarmUp() {}

  static void run(CudaStream stream, Runnable op) {
    long t0 = System.nanoTime();
    op.run();
    stream.synchronize();
    long first = Math.max(1, System.nanoTime() - t0);
    long calls = Math.min(50, 2_000_000_000L / first);
    for (long i = 0; i < calls; i++) {
      op.run();
    }
    stream.synchronize();
  }
}
