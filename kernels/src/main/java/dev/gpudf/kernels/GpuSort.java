package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Drives {@code sort.cu}: stable LSD radix passes over each sort key's subkeys, from the last
 * key to the first, carrying the row permutation along; and, for tables of few rows whose keys
 * need many radix passes, {@code merge_sort.cu}'s comparison sort, which makes one launch per
 * doubling of its sorted runs instead of one per 8 bits of key. Both give the same stable order.
 */
final class GpuSort {
  /** Rows per tile of the scatter kernel; chunks are multiples of it. */

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

  /**
   * Most rows the comparison sort takes: its passes compare rows through every key in global
   * memory, which past this costs more than the radix passes' launches.
   */
  static final int MERGE_SORT_MAX_ROWS = 1 << 16;

  /** Radix passes (8 bits each) above which a table of at most {@link #MERGE_SORT_MAX_ROWS} rows is merge sorted. */
  static final int MERGE_SORT_MIN_PASSES = 8;

  /** The stable sorting permutation of {@code table} by {@code keys}, as an owned int32 buffer. */
  static DeviceBuffer argsort(Exec exec, DeviceTable table, List<SortKey> keys) {
    int n = table.rowCount();
    if (n > 0 && n <= MERGE_SORT_MAX_ROWS && (n <= MergeSort.TILE || radixPasses(table, keys) > MERGE_SORT_MIN_PASSES)) {
      return MergeSort.argsort(exec, table, keys);
    }
    return radixArgsort(exec, table, keys);
  }

  /**
   * A lower bound of the radix passes that sorting by {@code keys} takes (a string counts its
   * length and one 8-byte chunk; its longest value is not read, which would wait for the device).
   */
  private static int radixPasses(DeviceTable table, List<SortKey> keys) {
    int passes = 0;
    for (SortKey k : keys) {
      DeviceColumn c = table.column(k.column());
      passes += switch (PhysicalType.of(c.type())) {
        case I8, BITS -> 1;
        case I16 -> 2;
        case I32, F32 -> 4;
        case I64, F64 -> 8;
        case D128 -> 16;
        case STRING -> 12;
      };
      passes += c.nullCount() > 0 ? 1 : 0;
    }
    return passes;
  }

  /** {@link #argsort} by radix passes, whatever the rows and keys. */
  static DeviceBuffer radixArgsort(Exec exec, DeviceTable table, List<SortKey> keys) {
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

  /** CUB's launch constants for one (key, value) variant of radix.cu's kernels. */
  private record Cub(int radixBits, int onesweepThreads, int onesweepItems, int histogramThreads, int scanThreads) {
    int digits() {
      return 1 << radixBits;
    }

    int tile() {
      return onesweepThreads * onesweepItems;
    }

    /** Items per portion: CUB's lookback counts within a portion in 30 bits. */
    int portion() {
      return ((1 << 28) - 1) / tile() * tile();
    }
  }

  // u32, u32 with rows, u64, u64 with rows: constants of the compiled kernels, the same on every device
  private static volatile Cub[] cub;

  private static Cub cub(Exec exec, int keyBytes, boolean withRows) {
    Cub[] c = cub;
    if (c == null) {
      try (DeviceBuffer out = exec.allocate(4 * 20)) {
        KernelLaunch.launch("cub_radix_config_kernel", 1, exec.stream(), out);
        int[] v = new int[20];
        for (int i = 0; i < v.length; i++) {
          v[i] = exec.readInt(out, 4L * i);
        }
        c = new Cub[4];
        for (int i = 0; i < 4; i++) {
          c[i] = new Cub(v[5 * i], v[5 * i + 1], v[5 * i + 2], v[5 * i + 3], v[5 * i + 4]);
        }
        cub = c;
      }
    }
    return c[(keyBytes == 4 ? 0 : 2) + (withRows ? 1 : 0)];
  }

  /**
   * Stable passes over the low {@code bits} of {@code b.keys}, moving the row ids along: CUB's
   * onesweep radix sort (radix.cu), driven the way cub::DeviceRadixSort drives it: the digit
   * counts of every pass in one histogram launch, their exclusive sums, then one onesweep launch
   * per pass and portion, each writing the next portion's starting offsets.
   */
  private static void radix(Exec exec, Buffers b, long n, int keyBytes, int bits, boolean withRows) {
    if (n == 0) {
      return;
    }
    Cub c = cub(exec, keyBytes, withRows);
    String variant = (keyBytes == 4 ? "u32" : "u64") + (withRows ? "_rows" : "");
    int passes = (bits + c.radixBits() - 1) / c.radixBits();
    int portionSize = c.portion();
    int portions = (int) ((n + portionSize - 1) / portionSize);
    int maxBlocks = (int) ((Math.min(n, portionSize) + c.tile() - 1) / c.tile());
    try (DeviceBuffer bins = exec.allocateZeroed(4L * portions * passes * c.digits());
        DeviceBuffer lookback = exec.allocate(4L * maxBlocks * c.digits());
        DeviceBuffer counters = exec.allocateZeroed(4L * portions * passes)) {
      int sms = exec.stream().device().multiprocessors();
      KernelLaunch.launch("cub_radix_histogram_" + variant + "_kernel", sms * 4, c.histogramThreads(), exec.stream(), bins,
          b.keys, (int) n, 0, bits);
      KernelLaunch.launch("cub_radix_exclusive_sum_" + variant + "_kernel", passes, c.scanThreads(), exec.stream(), bins);
      for (int pass = 0; pass < passes; pass++) {
        int current = pass * c.radixBits();
        int width = Math.min(bits - current, c.radixBits());
        for (int portion = 0; portion < portions; portion++) {
          long first = (long) portion * portionSize;
          int items = (int) Math.min(n - first, portionSize);
          int blocks = (items + c.tile() - 1) / c.tile();
          exec.zero(lookback, 0, 4L * blocks * c.digits());
          long binsIn = bins.address() + 4L * ((long) portion * passes + pass) * c.digits();
          Object binsOut = portion < portions - 1 ? (Object) (bins.address() + 4L * ((long) (portion + 1) * passes + pass)
              * c.digits()) : null;
          KernelLaunch.launch("cub_radix_onesweep_" + variant + "_kernel", blocks, c.onesweepThreads(), exec.stream(),
              lookback, counters.address() + 4L * ((long) portion * passes + pass), binsOut, binsIn, b.keysAlt,
              b.keys.address() + first * keyBytes, withRows ? b.rowsAlt : null,
              withRows ? (Object) (b.rows.address() + 4L * first) : null, items, current, width);
        }
        b.swapKeys();
        if (withRows) {
          b.swapRows();
        }
      }
    }
  }
}
