package dev.gpudf.columnar;

/** Resolution of a {@link TypeId#TIMESTAMP} column: the unit of its int64 values since the epoch. */
public enum TimeUnit {
  SECOND, MILLISECOND, MICROSECOND, NANOSECOND
}
