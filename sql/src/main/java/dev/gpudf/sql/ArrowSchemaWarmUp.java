package dev.gpudf.sql;

/**
 * Initializes Arrow's {@code Schema} class on a daemon thread when a process opens its first
 * session. Every query result is a {@code VectorSchemaRoot}, whose {@code Schema} builds a Jackson
 * {@code ObjectMapper} and a reader of itself when its class initializes (about 560 classes): a
 * fresh process's first result took 290-320 ms more to build on a 2-core host and 227 ms on the
 * GPU host's 16 cores (benchmarks/results/2026-12-07-cold-start-sf1-h100-s57.txt, the small
 * table's {@code transfer}), where the query itself took a few. Started with the session, it
 * overlaps the session's own start and the first plan; a query that needs the class sooner waits
 * for it as for any class under initialization. Like the planner's warm-up it needs a core to
 * spare ({@link PlannerWarmUp#MIN_CORES}): on 2 cores the first result's 300 ms went, and the
 * first plan took about as much longer; with the JVM told 16 cores (both warm-ups running) on
 * the same 2 the process ended 60-700 ms sooner in each of five runs
 * (benchmarks/results/2026-12-07-arrow-schema-warmup-cpu-s57.txt; not yet measured on the GPU
 * host). Off with {@code -Dgpudf.arrow.warmUp=false}, or with every warm-up under {@code
 * -Dgpudf.plan.warmUp=false}; a failure is left for the first result to meet and report.
 */
final class ArrowSchemaWarmUp {
  private static final java.util.concurrent.atomic.AtomicBoolean STARTED = new java.util.concurrent.atomic.AtomicBoolean();

  private ArrowSchemaWarmUp() {}

  /**
   * Starts the initialization unless it started in this process already, is turned off, or the
   * machine has fewer than {@link PlannerWarmUp#MIN_CORES} cores.
   */
  static void startOnce() {
    if (!Boolean.parseBoolean(System.getProperty("gpudf.plan.warmUp", "true"))
        || !Boolean.parseBoolean(System.getProperty("gpudf.arrow.warmUp", "true"))
        || Runtime.getRuntime().availableProcessors() < PlannerWarmUp.MIN_CORES || !STARTED.compareAndSet(false, true)) {
      return;
    }
    // the class literal names the class (a typo would not compile) without initializing it
    PlannerWarmUp.initializeSoon(org.apache.arrow.vector.types.pojo.Schema.class.getName(),
        "gpudf-arrow-schema-warm-up");
  }
}
