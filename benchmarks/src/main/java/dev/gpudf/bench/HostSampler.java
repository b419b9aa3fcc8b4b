package dev.gpudf.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Where a thread (or each of gpudf's worker threads, {@link #workers}) spends host time, by
 * sampling its stack every {@code periodMicros} from a thread of its own (the bundle's runtime has
 * no JFR). Each sample counts once for its leaf frame, once for that frame with the innermost
 * three gpudf lines under it, and once for every distinct gpudf method, CUDA driver call and class
 * load on the stack (inclusive).
 * {@link Thread#getStackTrace()} sees the thread at a safepoint, so Java frames are biased towards loop ends and calls, but a
 * thread inside native code (the CUDA driver through JCuda) shows that native frame as its leaf.
 * Opened around the work to sample, closed to stop; the counts it gave {@link Counts} say what it saw.
 */
final class HostSampler implements AutoCloseable {
  // the threads sampled at each tick, and whether a frame is named with its thread's name
  private final java.util.function.Supplier<List<Thread>> targets;
  private final boolean named;
  private final Thread sampler;
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final Counts counts;

  /** Samples, by leaf frame and by gpudf method on the stack. */
  static final class Counts {
    private final Map<String, Integer> leaves = new HashMap<>();
    private final Map<String, Integer> inclusive = new HashMap<>();
    private final Map<String, Integer> placed = new HashMap<>();
    private int samples;

    /** Adds {@code other}'s samples to these. */
    synchronized void add(Counts other) {
      synchronized (other) {
        samples += other.samples;
        other.leaves.forEach((k, v) -> leaves.merge(k, v, Integer::sum));
        other.inclusive.forEach((k, v) -> inclusive.merge(k, v, Integer::sum));
        other.placed.forEach((k, v) -> placed.merge(k, v, Integer::sum));
      }
    }

    /**
     * The {@code top} leaf frames, the {@code top} leaf frames placed by the gpudf line that led to
     * them (which wait, say, a stream synchronization is), and the {@code top} gpudf methods by
     * share of samples, each line led by {@code label}.
     */
    synchronized void print(String label, int top) {
      System.out.printf(Locale.ROOT, "%s %d samples%n", label, samples);
      print(label + " leaf", leaves, top);
      print(label + " at", placed, top);
      print(label + " incl", inclusive, top);
    }

    private void print(String label, Map<String, Integer> counts, int top) {
      counts.entrySet().stream().sorted((x, y) -> Integer.compare(y.getValue(), x.getValue())).limit(top)
          .forEach(e -> System.out.printf(Locale.ROOT, "%s %5.1f%% %s%n", label, 100.0 * e.getValue() / Math.max(1, samples),
              e.getKey()));
    }
  }

  /** Starts sampling {@code target} every {@code periodMicros} microseconds into {@code counts}. */
  HostSampler(Thread target, long periodMicros, Counts counts) {
    this(() -> List.of(target), false, periodMicros, counts);
  }

  /**
   * Starts sampling gpudf's worker threads (those named {@code gpudf-...}: the chunk and page
   * readers, the compilers, the pools) every {@code periodMicros} microseconds into {@code counts},
   * each frame led by its thread's name; a worker idle in its pool's queue is not counted.
   */
  static HostSampler workers(long periodMicros, Counts counts) {
    return new HostSampler(HostSampler::gpudfThreads, true, periodMicros, counts);
  }

  private HostSampler(java.util.function.Supplier<List<Thread>> targets, boolean named, long periodMicros, Counts counts) {
    this.targets = targets;
    this.named = named;
    this.counts = counts;
    this.sampler = new Thread(() -> {
      while (running.get()) {
        sample();
        java.util.concurrent.locks.LockSupport.parkNanos(periodMicros * 1000);
      }
    }, "host-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** Whether {@code e} counts inclusively: a gpudf method, a CUDA driver call, or loading a class. */
  private static boolean counted(StackTraceElement e) {
    String c = e.getClassName();
    return c.startsWith("dev.gpudf.") || c.startsWith("jcuda.driver.")
        || (c.equals("java.lang.ClassLoader") && e.getMethodName().equals("loadClass"));
  }

  private void sample() {
    for (Thread target : targets.get()) {
      StackTraceElement[] stack = target.getStackTrace();
      if (stack.length == 0 || (named && idle(stack))) {
        continue;
      }
      String tag = named ? "[" + target.getName() + "] " : "";
      synchronized (counts) {
        counts.samples++;
        counts.leaves.merge(tag + frame(stack[0]), 1, Integer::sum);
        counts.placed.merge(tag + frame(stack[0]) + " < " + caller(stack), 1, Integer::sum);
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (StackTraceElement e : stack) {
          if (counted(e) && seen.add(frame(e))) {
            counts.inclusive.merge(tag + frame(e), 1, Integer::sum);
          }
        }
      }
    }
  }

  /** The live threads named {@code gpudf-...}. */
  private static List<Thread> gpudfThreads() {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] all = new Thread[root.activeCount() + 16];
    int n = root.enumerate(all, true);
    List<Thread> out = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (all[i].getName().startsWith("gpudf-")) {
        out.add(all[i]);
      }
    }
    return out;
  }

  /** Whether a worker's stack is its pool waiting for work (a thread with nothing to do, not one waiting on a result). */
  private static boolean idle(StackTraceElement[] stack) {
    for (StackTraceElement e : stack) {
      String m = e.getClassName() + "." + e.getMethodName();
      if (m.equals("java.util.concurrent.ThreadPoolExecutor.getTask") || m.equals("java.util.concurrent.ForkJoinPool.awaitWork")) {
        return true;
      }
    }
    return false;
  }

  /**
   * The innermost three gpudf frames of {@code stack} with their files' lines, innermost first
   * (a stream synchronization's wrapper, what waits, and what asked for that), or "-" where none is.
   */
  private static String caller(StackTraceElement[] stack) {
    StringBuilder out = new StringBuilder();
    int found = 0;
    for (int i = 0; i < stack.length && found < 3; i++) {
      if (stack[i].getClassName().startsWith("dev.gpudf.")) {
        out.append(found++ == 0 ? "" : " < ").append(frame(stack[i])).append(':').append(stack[i].getLineNumber());
      }
    }
    return found == 0 ? "-" : out.toString();
  }

  private static String frame(StackTraceElement e) {
    String cls = e.getClassName();
    return cls.substring(cls.lastIndexOf('.') + 1) + "." + e.getMethodName();
  }

  @Override
  public void close() {
    running.set(false);
    try {
      sampler.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping the host sampler", e);
    }
  }
}
