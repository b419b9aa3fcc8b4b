package dev.gpudf.sql.files;

import dev.gpudf.columnar.ArrowInput;
import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A table's append log: an Arrow IPC stream (the schema, then one record batch per change, no
 * end marker) of the rows appended since the table's file was written whole. Each change is one
 * batch, forced to disk before the statement that made it is answered, so a change is in the log
 * whole or not at all: a crash in the middle of a write leaves a torn last batch, which readers
 * skip and {@link #repair} cuts off. The table's Arrow file names its log in its footer
 * ({@link #LOG_KEY}), so a log that a crash left behind a rewritten file is never applied. The
 * server's data directory writes logs; every loader of a directory applies them
 * ({@code FileTables.loadDirectory}).
 */
public final class AppendLog {
  private static final Logger LOG = LoggerFactory.getLogger(AppendLog.class);
  /** The footer key of a table's Arrow file that names its append log. */
  public static final String LOG_KEY = "gpudf.log";

  private AppendLog() {}

  /** Appends {@code rows} to the log at {@code log} (created with their schema if absent) as one batch, on disk when this returns. */
  public static void append(Path log, VectorSchemaRoot rows) throws IOException {
    boolean fresh = !Files.exists(log);
    try (FileChannel ch = FileChannel.open(log, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      if (fresh || ch.size() == 0) {
        // a new log: the stream's schema, then the batch; no end marker, as batches follow later
        ArrowStreamWriter writer = new ArrowStreamWriter(rows, null, Channels.newOutputStream(ch));
        writer.start();
        writer.writeBatch();
      } else {
        try (ArrowRecordBatch batch = new VectorUnloader(rows).getRecordBatch()) {
          MessageSerializer.serialize(new WriteChannel(ch), batch);
        }
      }
      ch.force(true);
    }
  }

  /**
   * Hands every whole batch of the log at {@code log} to {@code apply}, in order, each checked
   * like any input before use (valid Arrow, the schema the log began with); a torn or damaged
   * tail, which a crash during a write leaves, is skipped with a warning. Returns the number of
   * batches applied.
   */
  public static int replay(Path log, BufferAllocator allocator, Consumer<VectorSchemaRoot> apply) throws IOException {
    return (int) scan(log, allocator, apply)[1];
  }

  /**
   * Cuts a torn or damaged tail off the log at {@code log} (deleting a log without a whole
   * schema), so that later appends follow its last whole batch.
   */
  public static void repair(Path log, BufferAllocator allocator) throws IOException {
    long good = scan(log, allocator, rows -> { })[0];
    if (good == Files.size(log) && good > 0) {
      return;
    }
    if (good == 0) {
      Files.delete(log);
    } else {
      try (FileChannel ch = FileChannel.open(log, StandardOpenOption.WRITE)) {
        ch.truncate(good);
        ch.force(true);
      }
    }
    LOG.warn("{}: cut to its whole batches ({} bytes)", log, good);
  }

  /** Reads the log's whole batches into {@code apply}; returns the bytes they end at (0 without a schema) and their number. */
  private static long[] scan(Path log, BufferAllocator allocator, Consumer<VectorSchemaRoot> apply) throws IOException {
    long good = 0;
    long batches = 0;
    String damage = null;
    long size = Files.size(log);
    try (FileChannel ch = FileChannel.open(log, StandardOpenOption.READ);
        ArrowStreamReader reader = new ArrowStreamReader(ch, allocator)) {
      VectorSchemaRoot root;
      try {
        root = reader.getVectorSchemaRoot();
        ArrowInput.checkSchema(root.getSchema(), log.toString());
      } catch (IOException | RuntimeException e) {
        damage = "no whole schema: " + e.getMessage();
        root = null;
      }
      if (root != null) {
        good = reader.bytesRead();
        while (true) {
          try {
            if (!reader.loadNextBatch()) {
              break;
            }
            ArrowInput.check(root, reader, log + ", batch " + batches);
          } catch (IOException | RuntimeException e) {
            damage = "batch " + batches + " is torn or damaged: " + e.getMessage();
            break;
          }
          apply.accept(root);
          batches++;
          good = reader.bytesRead();
        }
      }
    }
    if (damage == null && good < size) {
      // a length prefix cut short reads as the stream's end
      damage = "a torn last batch (" + (size - good) + " bytes)";
    }
    if (damage != null) {
      LOG.warn("{}: {}; its first {} batch(es) hold", log, damage, batches);
    }
    return new long[] {good, batches};
  }

  /** The log id in the footer of Arrow file {@code file}, or null (a file not written by a server, or unreadable). */
  public static String logId(Path file, BufferAllocator allocator) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); ArrowFileReader r = new ArrowFileReader(ch, allocator)) {
      r.getVectorSchemaRoot(); // reads the footer, where the metadata is
      String id = r.getMetaData().get(LOG_KEY);
      return id != null && id.matches("[0-9a-f]{1,32}") ? id : null;
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: no append log id readable ({})", file, e.getMessage());
      return null;
    }
  }

  /** The footer metadata of a table's Arrow file that names log {@code id}. */
  public static Map<String, String> footer(String id) {
    checkId(id);
    return Map.of(LOG_KEY, id);
  }

  private static void checkId(String id) {
    if (!id.matches("[0-9a-f]{1,32}")) {
      throw new UserException("bad append log id '" + id + "'");
    }
  }

  /** The log's file for a table of file stem {@code stem} whose file names log {@code id}: hidden, so no loader takes it for a table. */
  public static Path path(Path dir, String stem, String id) {
    checkId(id);
    return dir.resolve("." + stem + "." + id + ".log");
  }
}
