package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Drives {@code sort.cu}: stable LSD radix passes over each sort key's subkeys, from the last
 * key to the first, carrying the row permutation along.
 */
final class GpuSort {
  /** Rows per tile of the scatter kernel; chunks are multiples of it. */
  private static final int TILE = 2048;

  private GpuSort() {}

  /** One materialised subkey: its kernel, key width in bytes, and significant bits. */
  private record Subkey(String kernel, int keyBytes, int bits, Object[] args) {}

  /** Ping-pong buffers for keys and row ids. */
  private static final class Buffers implements AutoCloseable {
    DeviceBuffer keys;
    DeviceBuffer keysAlt;
    DeviceBuffer rows;
    DeviceBuffer rowsAlt;

    void swapKeys() {
      DeviceBuffer t = keys;
      keys = keysAlt;
      keysAlt = t;
    }

    void swapRows() {
      DeviceBuffer t = rows;
      rows = rowsAlt;
      rowsAlt = t;
    }

    @Override
    public void close() {
      for (DeviceBuffer b : new DeviceBuffer[] {keys, keysAlt, rows, rowsAlt}) {
        if (b != null) {
          b.close();
        }
      }
    }
  }

  /** The stable sorting permutation of {@code table} by {@code keys}, as an owned int32 buffer. */
  static DeviceBuffer argsort(Exec exec, DeviceTable table, List<SortKey> keys) {
    int n = table.rowCount();
    try (Buffers b = new Buffers()) {
      b.keys = exec.allocate(8L * n);
      b.keysAlt = exec.allocate(8L * n);
      b.rows = exec.allocate(4L * n);
      b.rowsAlt = exec.allocate(4L * n);
      if (n > 0) {
        KernelLaunch.launch("iota_kernel", KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(), b.rows,
            (long) n, 0);
      }
      for (int k = keys.size() - 1; k >= 0 && n > 0; k--) {
        SortKey key = keys.get(k);
        DeviceColumn c = table.column(key.column());
        for (Subkey s : subkeys(exec, c, key)) {
          Object[] args = s.args.clone();
          args[mapArg(s)] = b.rows;
          args[args.length - 1] = b.keys;
          KernelLaunch.launch(s.kernel, KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(), args);
          radix(exec, b, n, s.keyBytes, s.bits, true);
        }
      }
      DeviceBuffer out = b.rows;
      b.rows = null;
      return out;
    }
  }

  /**
   * A lone null-free integer-like column sorted by itself: keys only, no permutation, decoded
   * back to values. Null when the column does not qualify.
   */
  static DeviceColumn sortLoneColumn(Exec exec, DeviceColumn c, SortKey key) {
    DataType t = c.type();
    PhysicalType p = PhysicalType.of(t);
    if (c.nullCount() > 0 || (p != PhysicalType.I32 && p != PhysicalType.I64)) {
      return null;
    }
    int n = c.rowCount();
    int bytes = p.deviceWidth;
    String suffix = p.suffix();
    try (Buffers b = new Buffers()) {
      b.keys = exec.allocate((long) bytes * n);
      b.keysAlt = exec.allocate((long) bytes * n);
      if (n > 0) {
        int grid = KernelLaunch.gridFor(exec.stream().device(), n);
        KernelLaunch.launch("sort_keys_" + suffix + "_kernel", grid, exec.stream(), c.data(), null, null, (long) n,
            bytes * 8, key.ascending() ? 0 : 1, b.keys);
        radix(exec, b, n, bytes, bytes * 8, false);
      }
      DeviceBuffer out = exec.allocate((long) bytes * n);
      try {
        if (n > 0) {
          KernelLaunch.launch("sort_decode_" + suffix + "_kernel", KernelLaunch.gridFor(exec.stream().device(), n),
              exec.stream(), b.keys, (long) n, bytes * 8, key.ascending() ? 0 : 1, out);
        }
        return new DeviceColumn(t, n, 0, out, null, null);
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }
  }

  /**
   * The first {@code limit} rows of {@code table} in {@code keys} order without sorting all of it:
   * a radix select finds the {@code limit}-th smallest 64-bit prefix of the first key, the rows at
   * or below it (the top rows, plus any that tie on the prefix) are filtered out and sorted fully.
   */
  static DeviceTable topN(Exec exec, DeviceTable table, List<SortKey> keys, int limit) {
    int n = table.rowCount();
    SortKey first = keys.get(0);
    DeviceColumn c = table.column(first.column());
    List<Subkey> subs = subkeys(exec, c, first);
    Subkey top = subs.get(c.nullCount() > 0 ? subs.size() - 2 : subs.size() - 1);
    int grid = KernelLaunch.gridFor(exec.stream().device(), n);
    try (DeviceBuffer vk = exec.allocate((long) top.keyBytes * n); DeviceBuffer prefix = exec.allocate(8L * n)) {
      Object[] args = top.args.clone();
      args[args.length - 1] = vk;
      KernelLaunch.launch(top.kernel, grid, exec.stream(), args);
      KernelLaunch.launch("topn_prefix_" + (top.keyBytes == 4 ? "u32" : "u64") + "_kernel", grid, exec.stream(), vk,
          c.validity(), (long) n, c.nullCount() > 0 ? 1 : 0, first.nullsFirst() ? 1 : 0, prefix);
      long threshold = select(exec, prefix, n, limit);
      DeviceBuffer bits = exec.allocate(4 * ((n + 31L) / 32));
      try (DeviceColumn mask = new DeviceColumn(DataType.BOOL, n, 0, bits, null, null)) {
        KernelLaunch.launch("select_mask_kernel", KernelLaunch.gridFor(exec.stream().device(), (n + 31L) / 32),
            exec.stream(), prefix, (long) n, threshold, bits);
        try (DeviceTable candidates = Filter.filter(exec, table, mask);
            DeviceBuffer perm = argsort(exec, candidates, keys)) {
          return GpuGather.table(exec, candidates, perm, Math.min(limit, candidates.rowCount()));
        }
      }
    }
  }

  /** The {@code rank}-th smallest (1-based) of {@code n} unsigned 64-bit values, by 8-bit digits. */
  private static long select(Exec exec, DeviceBuffer values, int n, int rank) {
    long prefix = 0;
    long mask = 0;
    long need = rank;
    try (DeviceBuffer hist = exec.allocate(8L * 256)) {
      for (int shift = 56; shift >= 0; shift -= 8) {
        exec.zero(hist, 0, 8L * 256);
        KernelLaunch.launch("select_hist_kernel", KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(), values,
            (long) n, shift, mask, prefix, hist);
        long[] h = exec.readLongs(hist, 256);
        long before = 0;
        int digit = 0;
        while (before + h[digit] < need) {
          before += h[digit];
          digit++;
        }
        need -= before;
        prefix |= (long) digit << shift;
        mask |= 0xFFL << shift;
      }
    }
    return prefix;
  }

  private static int mapArg(Subkey s) {
    return switch (s.kernel) {
      case "sort_nullkey_kernel" -> 1;
      case "sort_keys_strchunk_kernel" -> 3;
      default -> 2;
    };
  }

  /** The subkeys of one sort column, least significant first; map and output slots left null. */
  private static List<Subkey> subkeys(Exec exec, DeviceColumn c, SortKey key) {
    int desc = key.ascending() ? 0 : 1;
    List<Subkey> out = new ArrayList<>();
    PhysicalType p = PhysicalType.of(c.type());
    switch (p) {
      case STRING -> {
        out.add(new Subkey("sort_keys_strlen_kernel", 4, 32, new Object[] {c.offsets(), c.validity(), null, (long) c.rowCount(), 32, desc, null}));
        int chunks = (maxLength(exec, c) + 7) / 8;
        for (int k = chunks - 1; k >= 0; k--) {
          out.add(new Subkey("sort_keys_strchunk_kernel", 8, 64,
              new Object[] {c.offsets(), c.data(), c.validity(), null, (long) c.rowCount(), k, desc, null}));
        }
      }
      case D128 -> {
        for (int word = 0; word < 2; word++) {
          out.add(new Subkey("sort_keys_d128_kernel", 8, 64, new Object[] {c.data(), c.validity(), null, (long) c.rowCount(), word, desc, null}));
        }
      }
      default -> {
        int bits = switch (p) {
          case I8, BITS -> 8;
          case I16 -> 16;
          case I32, F32 -> 32;
          default -> 64;
        };
        out.add(new Subkey("sort_keys_" + p.suffix() + "_kernel", bits == 64 ? 8 : 4, p == PhysicalType.BITS ? 1 : bits,
            new Object[] {c.data(), c.validity(), null, (long) c.rowCount(), bits, desc, null}));
      }
    }
    if (c.nullCount() > 0) {
      out.add(new Subkey("sort_nullkey_kernel", 4, 1, new Object[] {c.validity(), null, (long) c.rowCount(), key.nullsFirst() ? 1 : 0, null}));
    }
    return out;
  }

  private static int maxLength(Exec exec, DeviceColumn c) {
    try (DeviceBuffer out = exec.allocateZeroed(8)) {
      KernelLaunch.launch("string_max_length_kernel", KernelLaunch.gridFor(exec.stream().device(), c.rowCount()),
          exec.stream(), c.offsets(), (long) c.rowCount(), out);
      return (int) exec.readLongs(out, 1)[0];
    }
  }

  /** Stable 8-bit passes over the low {@code bits} of {@code b.keys}, moving the row ids along. */
  private static void radix(Exec exec, Buffers b, long n, int keyBytes, int bits, boolean withRows) {
    long[] g = DeviceScan.grid(exec, n, TILE);
    int blocks = (int) g[0];
    String k = keyBytes == 4 ? "u32" : "u64";
    try (DeviceBuffer hist = exec.allocate(8L * 256 * blocks)) {
      for (int shift = 0; shift < bits; shift += 8) {
        KernelLaunch.launch("radix_hist_" + k + "_kernel", blocks, exec.stream(), b.keys, n, shift, g[1], hist);
        DeviceScan.scanAsync(exec, PhysicalType.I64, hist, null, 256L * blocks, hist, false, null, 0);
        KernelLaunch.launch("radix_scatter_" + k + "_kernel", blocks, exec.stream(), b.keys, withRows ? b.rows : null, n,
            shift, g[1], hist, b.keysAlt, withRows ? b.rowsAlt : null);
        b.swapKeys();
        if (withRows) {
          b.swapRows();
        }
      }
    }
  }
}
