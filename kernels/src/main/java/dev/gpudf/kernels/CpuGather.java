package dev.gpudf.kernels;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;

/** The CPU twin of {@link GpuGather}: the same contract over Arrow vectors, in parallel chunks. */
final class CpuGather {
  private static final int CHUNK = 1 << 15;

  private CpuGather() {}

  static HostTable table(BufferAllocator allocator, HostTable table, int[] map) {
    return gather(allocator, table, map, false);
  }

  /**
   * Like {@link #table} but a negative index yields a row of nulls (the unmatched side of an
   * outer join); indices past the end are still an error.
   */
  static HostTable tableWithNulls(BufferAllocator allocator, HostTable table, int[] map) {
    return gather(allocator, table, map, true);
  }

  private static HostTable gather(BufferAllocator allocator, HostTable table, int[] map, boolean nullRows) {
    int srcRows = table.rowCount();
    boolean holes = holes(map);
    boolean bad = IntStream.range(0, map.length).parallel().anyMatch(i -> map[i] >= srcRows || (!nullRows && map[i] < 0));
    if (bad) {
      throw new UserException("gather map holds an index outside [0, " + srcRows + ")");
    }
    List<HostColumn> out = new ArrayList<>();
    try {
      for (int i = 0; i < table.columnCount(); i++) {
        out.add(column(allocator, table.names().get(i), table.column(i), map, holes));
      }
    } catch (RuntimeException e) {
      out.forEach(HostColumn::close);
      throw e;
    }
    return new HostTable(table.names(), out, map.length);
  }

  /** Column {@code src} gathered by {@code map}; a negative index yields NULL. */
  static HostColumn column(BufferAllocator allocator, String name, HostColumn src, int[] map) {
    return column(allocator, name, src, map, holes(map));
  }

  /** Whether {@code map} holds a negative index (a NULL row); a loop, once for all of a table's columns. */
  private static boolean holes(int[] map) {
    for (int r : map) {
      if (r < 0) {
        return true;
      }
    }
    return false;
  }

  private static HostColumn column(BufferAllocator allocator, String name, HostColumn src, int[] map, boolean holes) {
    if (src.codes() != null) {
      // strings held as codes stay so: the rows' codes, over the same dictionary
      return HostColumn.encoded(src.codes().gather(map, allocator), ArrowTypes.toArrowField(name, src.type()), allocator);
    }
    FieldVector v = src.vector();
    int n = map.length;
    List<ArrowBuf> bufs = new ArrayList<>(3);
    try {
      int nulls = 0;
      if (src.nullCount() > 0 || holes) {
        ArrowBuf validity = bits(allocator, src.nullCount() > 0 ? v.getValidityBuffer() : null, map);
        bufs.add(validity);
        nulls = n - (int) HostBitmaps.countSet(validity, n);
      } else {
        bufs.add(allocator.getEmpty());
      }
      if (src.type().id() == TypeId.BOOL) {
        bufs.add(bits(allocator, v.getDataBuffer(), map));
      } else if (src.type().id() == TypeId.STRING) {
        long so = v.getOffsetBuffer().memoryAddress();
        ArrowBuf offsets = allocator.buffer(4L * (n + 1));
        bufs.add(offsets);
        long total = 0;
        long oa = offsets.memoryAddress();
        for (int i = 0; i < n; i++) {
          MemoryUtil.putInt(oa + 4L * i, (int) total);
          if (map[i] < 0) {
            continue;
          }
          total += MemoryUtil.getInt(so + 4L * map[i] + 4) - MemoryUtil.getInt(so + 4L * map[i]);
          if (total > Integer.MAX_VALUE) {
            throw new UserException("gathered strings hold more than a column's 2 GiB limit");
          }
        }
        MemoryUtil.putInt(oa + 4L * n, (int) total);
        ArrowBuf chars = allocator.buffer(Math.max(1, total));
        bufs.add(chars);
        long sc = v.getDataBuffer().memoryAddress();
        long dc = chars.memoryAddress();
        parallelChunks(n, (from, to) -> {
          for (int i = from; i < to;) {
            if (map[i] < 0) {
              i++;
              continue;
            }
            // a run of consecutive source rows is one run of bytes
            int run = run(map, i, to);
            int s = MemoryUtil.getInt(so + 4L * map[i]);
            int len = MemoryUtil.getInt(so + 4L * (map[i] + run)) - s;
            copy(sc + s, dc + MemoryUtil.getInt(oa + 4L * i), len);
            i += run;
          }
        });
      } else {
        int w = hostWidth(v);
        ArrowBuf data = allocator.buffer(Math.max(1, (long) n * w));
        bufs.add(data);
        long s = v.getDataBuffer().memoryAddress();
        long d = data.memoryAddress();
        parallelChunks(n, (from, to) -> {
          for (int i = from; i < to;) {
            if (map[i] < 0) {
              i++;
              continue;
            }
            int run = run(map, i, to);
            long a = s + (long) map[i] * w;
            long b = d + (long) i * w;
            if (run > 1) {
              copy(a, b, (long) run * w);
            } else {
              switch (w) {
                case 1 -> MemoryUtil.putByte(b, MemoryUtil.getByte(a));
                case 2 -> MemoryUtil.putShort(b, MemoryUtil.getShort(a));
                case 4 -> MemoryUtil.putInt(b, MemoryUtil.getInt(a));
                case 8 -> MemoryUtil.putLong(b, MemoryUtil.getLong(a));
                case 16 -> {
                  MemoryUtil.putLong(b, MemoryUtil.getLong(a));
                  MemoryUtil.putLong(b + 8, MemoryUtil.getLong(a + 8));
                }
                default -> MemoryUtil.copyMemory(a, b, w);
              }
            }
            i += run;
          }
        });
      }
      return new HostColumn(load(allocator, name, src.type(), n, nulls, bufs));
    } finally {
      bufs.forEach(ArrowBuf::close);
    }
  }

  /**
   * Rows {@code i}, {@code i + 1} ... (before {@code to}) whose sources follow {@code map[i]} one
   * by one: a filter that keeps most rows maps long runs, copied whole instead of row by row.
   */
  private static int run(int[] map, int i, int to) {
    int run = 1;
    while (i + run < to && map[i + run] == map[i] + run) {
      run++;
    }
    return run;
  }

  /** {@code bytes} bytes from {@code a} to {@code b}: short ones (a string of a few characters) without a call to the copy stub. */
  private static void copy(long a, long b, long bytes) {
    if (bytes > 32) {
      MemoryUtil.copyMemory(a, b, bytes);
      return;
    }
    long k = 0;
    for (; k + 8 <= bytes; k += 8) {
      MemoryUtil.putLong(b + k, MemoryUtil.getLong(a + k));
    }
    for (; k < bytes; k++) {
      MemoryUtil.putByte(b + k, MemoryUtil.getByte(a + k));
    }
  }

  /** A vector named {@code name} of type {@code type} over {@code bufs} (which it retains). */
  static FieldVector load(BufferAllocator allocator, String name, DataType type, int n, int nulls, List<ArrowBuf> bufs) {
    FieldVector out = ArrowTypes.toArrowField(name, type).createVector(allocator);
    try {
      out.loadFieldBuffers(new ArrowFieldNode(n, nulls), bufs);
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
    return out;
  }

  /** Arrow stores every DECIMAL in 16 bytes; other fixed-width types as on the device. */
  static int hostWidth(FieldVector v) {
    return v.getField().getType().getTypeID() == org.apache.arrow.vector.types.pojo.ArrowType.ArrowTypeID.Decimal
        ? 16 : ArrowTypes.fromArrow(v.getField()).byteWidth();
  }

  /** Gathered bits; a null {@code src} reads as all set, and a negative index as clear. */
  private static ArrowBuf bits(BufferAllocator allocator, ArrowBuf src, int[] map) {
    int n = map.length;
    int words = (n + 63) / 64;
    ArrowBuf out = allocator.buffer(Math.max(8, 8L * words));
    long s = src == null ? 0 : src.memoryAddress();
    long d = out.memoryAddress();
    IntStream.range(0, (words + 511) / 512).parallel().forEach(c -> {
      for (int w = c * 512; w < Math.min(words, (c + 1) * 512); w++) {
        long word = 0;
        for (int k = 0; k < 64 && w * 64 + k < n; k++) {
          int r = map[w * 64 + k];
          if (r >= 0 && (s == 0 || HostBitmaps.isSet(s, r))) {
            word |= 1L << k;
          }
        }
        MemoryUtil.putLong(d + 8L * w, word);
      }
    });
    return out;
  }

  interface Range {
    void run(int from, int to);
  }

  static void parallelChunks(int n, Range r) {
    IntStream.range(0, (n + CHUNK - 1) / CHUNK).parallel().forEach(c -> r.run(c * CHUNK, Math.min(n, (c + 1) * CHUNK)));
  }
}
