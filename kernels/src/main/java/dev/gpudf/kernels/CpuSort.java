package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.stream.IntStream;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;

/**
 * The CPU twin of {@link GpuSort}: an independent, comparison-based implementation of the same
 * order, so each backend checks the other: a bottom-up merge sort on {@code int} row ids, runs
 * sorted and pairs of runs merged in parallel, taking the left run on ties, so it is stable by
 * construction and needs no boxing.
 */
final class CpuSort {
  private CpuSort() {}

  /** Compares two rows; negative when {@code a} sorts first. */
  interface RowOrder {
    int compare(int a, int b);
  }

  /**
   * The permutation that sorts {@code table} by {@code keys} (stable); {@code checkpoint} runs
   * before each merge pass (a sort of many rows is one long operator; a checkpoint that throws
   * stops it).
   */
  static int[] argsort(Runnable checkpoint, HostTable table, List<SortKey> keys) {
    RowOrder order = order(table, keys);
    int n = table.rowCount();
    int[] a = new int[n];
    int[] b = new int[n];
    Arrays.setAll(a, i -> i);
    final int first = 32;
    IntStream.range(0, (n + first - 1) / first).parallel()
        .forEach(r -> insertionSort(a, r * first, Math.min(n, (r + 1) * first), order));
    for (int run = first; run < n; run *= 2) {
      checkpoint.run();
      final int width = run;
      IntStream.range(0, (n + 2 * width - 1) / (2 * width)).parallel().forEach(r -> {
        int lo = r * 2 * width;
        merge(a, b, lo, Math.min(n, lo + width), Math.min(n, lo + 2 * width), order);
      });
      System.arraycopy(b, 0, a, 0, n);
    }
    return a;
  }

  private static void insertionSort(int[] a, int from, int to, RowOrder order) {
    for (int i = from + 1; i < to; i++) {
      int x = a[i];
      int j = i - 1;
      while (j >= from && order.compare(a[j], x) > 0) {
        a[j + 1] = a[j];
        j--;
      }
      a[j + 1] = x;
    }
  }

  // Stable: on ties the left run's row goes first.
  private static void merge(int[] src, int[] dst, int lo, int mid, int hi, RowOrder order) {
    int i = lo;
    int j = mid;
    int k = lo;
    while (i < mid && j < hi) {
      dst[k++] = order.compare(src[j], src[i]) < 0 ? src[j++] : src[i++];
    }
    while (i < mid) {
      dst[k++] = src[i++];
    }
    while (j < hi) {
      dst[k++] = src[j++];
    }
  }

  static int[] topN(HostTable table, List<SortKey> keys, int limit) {
    RowOrder order = order(table, keys);
    int n = table.rowCount();
    int chunk = 1 << 16;
    // a max-heap per chunk keeps that chunk's `limit` first rows; ties go to the lower row id
    RowOrder withIds = (a, b) -> {
      int c = order.compare(a, b);
      return c != 0 ? c : Integer.compare(a, b);
    };
    List<Integer> candidates = new ArrayList<>();
    IntStream.range(0, (n + chunk - 1) / chunk).parallel().mapToObj(c -> {
      PriorityQueue<Integer> heap = new PriorityQueue<>((a, b) -> withIds.compare(b, a));
      for (int i = c * chunk; i < Math.min(n, (c + 1) * chunk) && limit > 0; i++) {
        if (heap.size() < limit) {
          heap.add(i);
        } else if (withIds.compare(i, heap.peek()) < 0) {
          heap.poll();
          heap.add(i);
        }
      }
      return heap;
    }).toList().forEach(candidates::addAll);
    candidates.sort((a, b) -> withIds.compare(a, b));
    return candidates.stream().limit(limit).mapToInt(Integer::intValue).toArray();
  }

  private static RowOrder order(HostTable table, List<SortKey> keys) {
    List<RowOrder> parts = new ArrayList<>();
    for (SortKey k : keys) {
      parts.add(column(table.column(k.column()), k));
    }
    return (a, b) -> {
      for (RowOrder p : parts) {
        int c = p.compare(a, b);
        if (c != 0) {
          return c;
        }
      }
      return 0;
    };
  }

  private static RowOrder column(HostColumn c, SortKey k) {
    FieldVector v = c.vector();
    PhysicalType p = PhysicalType.of(c.type());
    CpuReduce.HostRows rows = new CpuReduce.HostRows(v, p, c.nullCount() > 0);
    RowOrder values = switch (p) {
      case F32, F64 -> (a, b) -> compareFloats(rows.doubleAt(a), rows.doubleAt(b));
      case D128 -> (a, b) -> {
        int h = Long.compare(rows.highAt(a), rows.highAt(b));
        return h != 0 ? h : Long.compareUnsigned(rows.longAt(a), rows.longAt(b));
      };
      case BITS -> {
        long data = v.getDataBuffer().memoryAddress();
        yield (a, b) -> Boolean.compare(HostBitmaps.isSet(data, a), HostBitmaps.isSet(data, b));
      }
      case STRING -> {
        long offsets = v.getOffsetBuffer().memoryAddress();
        long chars = v.getDataBuffer().memoryAddress();
        yield (a, b) -> compareStrings(chars, offsets, a, b);
      }
      default -> (a, b) -> Long.compare(rows.longAt(a), rows.longAt(b));
    };
    int direction = k.ascending() ? 1 : -1;
    int nullSide = k.nullsFirst() ? -1 : 1;
    return (a, b) -> {
      boolean va = rows.valid(a);
      boolean vb = rows.valid(b);
      if (!va || !vb) {
        return va == vb ? 0 : (va ? -nullSide : nullSide);
      }
      return direction * values.compare(a, b);
    };
  }

  /** NaN above every number and equal to NaN; -0.0 equal to 0.0. */
  static int compareFloats(double x, double y) {
    boolean nx = Double.isNaN(x);
    boolean ny = Double.isNaN(y);
    if (nx || ny) {
      return nx == ny ? 0 : (nx ? 1 : -1);
    }
    return Double.compare(x == 0 ? 0.0 : x, y == 0 ? 0.0 : y);
  }

  /** Unsigned byte order of UTF-8, which is code point order; a prefix sorts first. */
  private static int compareStrings(long chars, long offsets, int a, int b) {
    int sa = MemoryUtil.getInt(offsets + 4L * a);
    int la = MemoryUtil.getInt(offsets + 4L * a + 4) - sa;
    int sb = MemoryUtil.getInt(offsets + 4L * b);
    int lb = MemoryUtil.getInt(offsets + 4L * b + 4) - sb;
    for (int i = 0; i < Math.min(la, lb); i++) {
      int c = Integer.compare(MemoryUtil.getByte(chars + sa + i) & 0xFF, MemoryUtil.getByte(chars + sb + i) & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(la, lb);
  }
}
