package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.util.List;

/**
 * Key columns described for {@code keys.cuh}: per column its kind and the addresses of its data,
 * validity and offsets, uploaded as an array of {@code KeyCol}. The device counterpart of
 * {@link HostKeys}, shared by the hash group-by and the hash join.
 */
final class GpuKeys {
  private GpuKeys() {}

  /** The {@code KeyCol} array for {@code keys}; the caller closes it (after the kernels that read it). */
  static DeviceBuffer describe(Exec exec, List<DeviceColumn> keys) {
    long[] words = new long[4 * Math.max(1, keys.size())];
    for (int k = 0; k < keys.size(); k++) {
      DeviceColumn c = keys.get(k);
      words[4 * k] = kind(PhysicalType.of(c.type()));
      words[4 * k + 1] = address(c.data());
      words[4 * k + 2] = address(c.validity());
      words[4 * k + 3] = address(c.offsets());
    }
    return exec.upload(words);
  }

  static long kind(PhysicalType p) {
    return switch (p) {
      case BITS -> 0;
      case STRING -> 3;
      case F32 -> 5;
      case F64 -> 9;
      default -> p.deviceWidth;
    };
  }

  static long address(DeviceBuffer b) {
    return b == null ? 0 : b.address();
  }

  /** Slots of an open-addressing table for {@code rows} entries: a power of two, at least 1.5 rows and 2. */
  static long capacity(long rows) {
    long want = Math.max(2, rows + rows / 2 + 1);
    return Long.highestOneBit(want - 1) << 1;
  }
}
