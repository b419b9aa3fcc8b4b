package dev.gpudf.sql;

/**
 * The memory one query may hold at once, in bytes (0: no limit of its own): {@code deviceBytes}
 * of device memory on its stream, {@code hostBytes} of Arrow host memory it allocates (Java heap
 * arrays of the CPU operators are bounded by the heap only). Tables and their spilled columns
 * are the catalog's, not the query's, and do not count. A query past either limit fails with
 * {@link dev.gpudf.columnar.error.QueryMemoryLimitException}.
 */
public record MemoryLimits(long deviceBytes, long hostBytes) {
  /** The setting that sets {@link #deviceBytes} for every session, in MiB. */
  public static final String DEVICE_SETTING = "gpudf.limits.queryDeviceMb";
  /** The setting that sets {@link #hostBytes} for every session, in MiB. */
  public static final String HOST_SETTING = "gpudf.limits.queryHostMb";
  /** No limit of a query's own: the device pool and the allocator bound it. */
  public static final MemoryLimits NONE = new MemoryLimits(0, 0);

  public MemoryLimits {
    if (deviceBytes < 0 || hostBytes < 0) {
      throw new IllegalArgumentException("memory limits are not negative: " + deviceBytes + ", " + hostBytes);
    }
  }

  /** The limits {@code -Dgpudf.limits.queryDeviceMb} and {@code -Dgpudf.limits.queryHostMb} set (none by default). */
  public static MemoryLimits fromSettings() {
    return new MemoryLimits(mib(DEVICE_SETTING), mib(HOST_SETTING));
  }

  private static long mib(String setting) {
    long v = Long.getLong(setting, 0);
    if (v < 0 || v > Long.MAX_VALUE >> 20) {
      throw new IllegalArgumentException(setting + " must be a number of MiB from 0, not " + v);
    }
    return v << 20;
  }
}
