package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.ParquetDecode;
import dev.gpudf.kernels.TableOps;
import dev.gpudf.sql.files.ChunkSource;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Columns of one chunk of a table kept in files, as read from the files: for a GPU catalog, those
 * its source gives as stored pages are kept so ({@link ParquetDecode.Chunk}) and their decoding
 * on the device is queued as soon as they are read, on a stream of the read's own (so that the
 * device decodes the next chunk, read ahead, while a scan waits for this one); the others are
 * decoded on the host into Arrow rows. Whoever holds it closes it; {@link #load} leaves it to be
 * closed.
 */
final class ChunkColumns implements AutoCloseable {
  /**
   * On unless {@code -Dgpudf.files.deviceDecode=false}: on the H200 at TPC-H SF10 in chunks of
   * 2^24 rows, a cold scan decoded on the device gave a cold geometric mean of 438 ms against 597
   * ms with Arrow's host reader, hot unchanged (benchmarks/results/2026-12-04-tpch-sf10-parquet-*-s27*).
   */
  static final boolean DEVICE_DECODE = Boolean.parseBoolean(System.getProperty("gpudf.files.deviceDecode", "true"));
  /**
   * For a CPU catalog, on unless {@code -Dgpudf.files.hostDecode=false}: the stored pages a source
   * gives are decoded by gpudf's own decoder ({@link ParquetDecode#decodeOnHost}) into each
   * chunk's vectors, the columns at once, instead of through Arrow's native reader, which decodes
   * into batches that are then copied into the chunk and reads batches ahead into memory of its
   * own.
   */
  static final boolean HOST_DECODE = Boolean.parseBoolean(System.getProperty("gpudf.files.hostDecode", "true"));

  private final int[] columns;
  private final int rows;
  // per column of `columns`: its stored pages, or null where it is among `hostRows`
  private final ParquetDecode.Chunk[] encoded;
  // the GPU catalog's columns its source reads as rows, or null
  private final VectorSchemaRoot hostRows;
  // the CPU catalog's columns, decoded on the host (strings from a dictionary kept encoded), or null
  private final HostTable hostTable;
  // the stream the stored pages decode on and their decoding (both null when there are none)
  private final Exec exec;
  private final ParquetDecode.Pending decoding;
  // how many of the columns gpudf's decoder decoded on the host (a CPU catalog's reads)
  private final int decodedOnHost;
  // the bytes of `encoded`'s pages, counted while they are open
  private final long storedBytes;

  private ChunkColumns(int[] columns, int rows, ParquetDecode.Chunk[] encoded, VectorSchemaRoot hostRows,
      HostTable hostTable, Exec exec, ParquetDecode.Pending decoding, int decodedOnHost) {
    this.decodedOnHost = decodedOnHost;
    this.hostTable = hostTable;
    this.columns = columns;
    this.rows = rows;
    this.encoded = encoded;
    this.hostRows = hostRows;
    this.exec = exec;
    this.decoding = decoding;
    storedBytes = java.util.Arrays.stream(encoded).filter(java.util.Objects::nonNull)
        .mapToLong(ParquetDecode.Chunk::storedBytes).sum();
  }

  /**
   * Columns {@code columns} of chunk {@code chunk} of {@code source}, into {@code into}; as stored
   * pages where {@code gpu} is not null and the source can, their decoding on {@code gpu} queued,
   * else decoded on the host. The caller closes it.
   */
  static ChunkColumns read(ChunkSource source, int chunk, int[] columns, BufferAllocator into, Gpu gpu) {
    return read(source, chunk, columns, into, gpu, HOST_DECODE);
  }

  /** As {@link #read(ChunkSource, int, int[], BufferAllocator, Gpu)}; a CPU read decodes with gpudf's decoder where {@code hostDecode}, else all by the source's reader. */
  static ChunkColumns read(ChunkSource source, int chunk, int[] columns, BufferAllocator into, Gpu gpu,
      boolean hostDecode) {
    ParquetDecode.Chunk[] encoded = new ParquetDecode.Chunk[columns.length];
    VectorSchemaRoot rows = null;
    Exec exec = null;
    try {
      if (gpu == null) {
        int[] decoded = new int[1];
        HostTable table;
        if (hostDecode) {
          table = decodedOnHost(source, chunk, columns, into, decoded);
        } else {
          try (VectorSchemaRoot read = source.read(chunk, columns, into)) {
            table = HostTable.fromArrow(read);
          }
        }
        return new ChunkColumns(columns, source.chunkRows().get(chunk), encoded, null, table, null, null, decoded[0]);
      }
      if (gpu != null && DEVICE_DECODE) {
        readEncoded(source, chunk, columns, into, encoded);
      }
      List<Integer> host = new ArrayList<>();
      for (int i = 0; i < columns.length; i++) {
        if (encoded[i] == null) {
          host.add(columns[i]);
        }
      }
      // no column at all (COUNT(*)) still reads the chunk's row count
      rows = host.isEmpty() && columns.length > 0 ? null
          : source.read(chunk, host.stream().mapToInt(Integer::intValue).toArray(), into);
      List<ParquetDecode.Chunk> stored = java.util.Arrays.stream(encoded).filter(java.util.Objects::nonNull).toList();
      ParquetDecode.Pending decoding = null;
      if (!stored.isEmpty()) {
        exec = Exec.onGpu(gpu, into);
        decoding = ParquetDecode.launch(exec, stored);
      }
      return new ChunkColumns(columns, source.chunkRows().get(chunk), encoded, rows, null, exec, decoding, 0);
    } catch (RuntimeException e) {
      // a failed launch has waited for its stream: the pages' bytes are free to go
      try (VectorSchemaRoot r = rows; Exec x = exec) {
        for (ParquetDecode.Chunk c : encoded) {
          if (c != null) {
            c.close();
          }
        }
      }
      throw e;
    }
  }

  /**
   * Reads the stored pages of each of {@code columns} the source gives so into {@code encoded},
   * the columns at once on {@link Readers}' threads (each also finds where its column's Snappy
   * pages split, where those are few and large, {@link ParquetDecode.Chunk#splitOnHost}): one
   * thread reads files from the page cache at
   * a few GB/s, less than the link and the decoder take. Every read has ended when this returns;
   * the first failure is thrown, the others' pages are left in {@code encoded} for the caller to
   * close.
   */
  private static void readEncoded(ChunkSource source, int chunk, int[] columns, BufferAllocator into,
      ParquetDecode.Chunk[] encoded) {
    List<java.util.concurrent.Future<ParquetDecode.Chunk>> reads = new ArrayList<>();
    for (int column : columns) {
      reads.add(Readers.POOL.submit(() -> {
        ParquetDecode.Chunk c = source.readEncoded(chunk, column, into);
        try {
          if (c != null) {
            c.splitOnHost();
          }
        } catch (RuntimeException e) {
          c.close();
          throw e;
        }
        return c;
      }));
    }
    // the reads hold pinned buffers: each is waited for, so that none is lost
    dev.gpudf.formats.Await.all(reads, "reading a chunk's pages", (c, i) -> encoded[i] = c);
  }

  /**
   * Columns {@code columns} of chunk {@code chunk} decoded on the host: each column the source
   * gives as stored pages is read and decoded on {@link Readers}' threads, the columns at once
   * (strings from a dictionary kept as their codes, {@link HostColumn#encoded}); the source reads
   * the others. Their count goes to {@code decoded[0]}. The caller closes the table.
   */
  private static HostTable decodedOnHost(ChunkSource source, int chunk, int[] columns, BufferAllocator into,
      int[] decoded) {
    List<java.util.concurrent.Future<HostColumn>> decodes = new ArrayList<>();
    for (int column : columns) {
      String name = source.names().get(column);
      decodes.add(Readers.POOL.submit(() -> {
        try (ParquetDecode.Chunk c = source.readEncoded(chunk, column, into)) {
          return c == null ? null : ParquetDecode.decodeOnHostColumn(c, name, into);
        }
      }));
    }
    HostColumn[] read = new HostColumn[columns.length];
    try {
      dev.gpudf.formats.Await.all(decodes, "decoding a chunk's pages", (col, i) -> read[i] = col);
      List<Integer> left = new ArrayList<>();
      for (int i = 0; i < columns.length; i++) {
        if (read[i] == null) {
          left.add(columns[i]);
        }
      }
      decoded[0] = columns.length - left.size();
      // no column at all (COUNT(*)) still asks the source, which checks its file is unchanged
      if (!left.isEmpty() || columns.length == 0) {
        try (VectorSchemaRoot rest = source.read(chunk, left.stream().mapToInt(Integer::intValue).toArray(), into);
            HostTable others = HostTable.fromArrow(rest)) {
          for (int i = 0, k = 0; i < columns.length; i++) {
            if (read[i] == null) {
              HostColumn c = others.column(k++);
              c.retain();
              read[i] = c;
            }
          }
        }
      }
      List<String> names = new ArrayList<>();
      for (int column : columns) {
        names.add(source.names().get(column));
      }
      HostTable table = new HostTable(names, List.of(read), source.chunkRows().get(chunk));
      java.util.Arrays.fill(read, null);
      return table;
    } finally {
      for (HostColumn c : read) {
        if (c != null) {
          c.close();
        }
      }
    }
  }

  /** The threads that read columns' stored pages at once: daemons, made when first used. */
  private static final class Readers {
    static final java.util.concurrent.ExecutorService POOL = java.util.concurrent.Executors.newFixedThreadPool(
        Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors())), r -> {
          Thread t = new Thread(r, "gpudf-page-reader");
          t.setDaemon(true);
          return t;
        });
  }

  /** How many of the columns gpudf's decoder decoded on the host (for a CPU catalog; the others Arrow's reader read). */
  int decodedOnHost() {
    return decodedOnHost;
  }

  /** How many of the columns are stored pages for the device to decode. */
  long decodedOnDevice() {
    return java.util.Arrays.stream(encoded).filter(java.util.Objects::nonNull).count();
  }

  /** The bytes of the stored pages the device decodes, as the files hold them. */
  long storedBytes() {
    return storedBytes;
  }

  /**
   * The columns decoded on the host (a CPU catalog's read), all of them in order, or those {@code
   * wanted} (each among those read; null: all) in that order: a table sharing them, which the
   * caller closes (and still this).
   */
  HostTable table(int[] wanted) {
    if (hostTable == null) {
      throw new InternalException("a chunk read for the device was taken as host rows");
    }
    int[] at = wanted == null ? java.util.stream.IntStream.range(0, columns.length).toArray()
        : java.util.Arrays.stream(wanted).map(w -> java.util.stream.IntStream.range(0, columns.length)
            .filter(i -> columns[i] == w).findFirst().orElseThrow(() -> new InternalException("column " + w + " was not read")))
            .toArray();
    List<HostColumn> picked = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (int i : at) {
      HostColumn c = hostTable.column(i);
      c.retain();
      picked.add(c);
      names.add(hostTable.names().get(i));
    }
    return new HostTable(names, picked, rows);
  }

  /**
   * The columns as a table on {@code gpu} in order, once the stored pages' decoding has ended; the
   * caller closes the table (and still this).
   */
  DeviceTable load(Gpu gpu, List<String> names) {
    List<DeviceColumn> out = new ArrayList<>();
    try (DeviceTable host = hostRows == null ? null : (DeviceTable) TableOps.load(gpu, hostRows)) {
      List<DeviceColumn> decoded = decoding == null ? List.of() : decoding.finish();
      int nextDecoded = 0;
      int nextHost = 0;
      for (ParquetDecode.Chunk c : encoded) {
        if (c != null) {
          out.add(decoded.get(nextDecoded++));
        } else {
          DeviceColumn d = host.column(nextHost++);
          d.retain();
          out.add(d);
        }
      }
      List<String> named = new ArrayList<>();
      for (int c : columns) {
        named.add(names.get(c));
      }
      return new DeviceTable(gpu, named, out, rows);
    } catch (RuntimeException e) {
      out.forEach(DeviceColumn::close);
      throw e;
    }
  }

  @Override
  public void close() {
    try {
      // first: a decoding never finished is waited for, as it may still read the pages' bytes
      if (decoding != null) {
        decoding.close();
      }
    } finally {
      try (hostRows; HostTable t = hostTable; Exec x = exec) {
        for (ParquetDecode.Chunk c : encoded) {
          if (c != null) {
            c.close();
          }
        }
      }
    }
  }
}
