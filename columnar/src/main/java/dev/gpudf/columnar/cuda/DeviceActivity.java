package dev.gpudf.columnar.cuda;

import java.util.concurrent.atomic.LongAdder;

/**
 * Process-wide counts of the host's dealings with the device that cost it time whatever the work
 * is: kernel launches, waits for a stream's work (each a round trip the host sits out) and streams
 * created. A benchmark that runs one query at a time takes a {@link #snapshot} before and after a
 * run and reads the difference, to say why a query is far from its roofline; with queries running
 * at once the counts mix. Counting is always on: an uncontended add costs a few nanoseconds, against
 * microseconds for each driver call it counts.
 */
public final class DeviceActivity {
  private static final LongAdder LAUNCHES = new LongAdder();
  private static final LongAdder WAITS = new LongAdder();
  private static final LongAdder STREAMS = new LongAdder();

  private DeviceActivity() {}

  /** Counts so far, or between two snapshots ({@link #since}). */
  public record Counts(long launches, long waits, long streams) {
    /** These counts less {@code before}'s. */
    public Counts since(Counts before) {
      return new Counts(launches - before.launches, waits - before.waits, streams - before.streams);
    }
  }

  /** The counts since the process started. */
  public static Counts snapshot() {
    return new Counts(LAUNCHES.sum(), WAITS.sum(), STREAMS.sum());
  }

  /** A kernel was launched. */
  public static void launched() {
    LAUNCHES.increment();
  }

  static void waited() {
    WAITS.increment();
  }

  static void streamCreated() {
    STREAMS.increment();
  }
}
