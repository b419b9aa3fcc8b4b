package dev.gpudf.flight;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;

/**
 * The directory a server loaded its tables from, kept in step with the catalog: after every
 * update or ingest, each table whose rows changed is written to {@code NAME.arrow} (a temporary
 * file renamed over the old one, so a crash leaves the old or the new file, never half of one),
 * and a dropped table's file is removed; so a restarted server finds the same tables. A table that
 * came from a CSV or Parquet file and then changed supersedes it: that file moves to
 * {@code .superseded/}, since two files of one name would clash on the next start.
 */
final class DataDirectory {
  private static final List<String> OTHER_FORMATS = List.of(".csv", ".parquet");
  private final Path dir;
  private final Map<String, Long> saved = new HashMap<>();

  /** A directory whose tables {@code session} has just loaded (so they need no writing yet). */
  DataDirectory(Path dir, GpuSession session) {
    this.dir = dir;
    saved.putAll(session.catalog().versions());
  }

  /** Writes what changed in {@code session}'s catalog since the last call; the caller has just changed it. */
  synchronized void sync(GpuSession session) {
    Map<String, Long> now = session.catalog().versions();
    try {
      for (Map.Entry<String, Long> t : now.entrySet()) {
        if (!t.getValue().equals(saved.get(t.getKey()))) {
          write(session, t.getKey());
          saved.put(t.getKey(), t.getValue());
        }
      }
      for (String gone : List.copyOf(saved.keySet())) {
        if (!now.containsKey(gone)) {
          Files.deleteIfExists(dir.resolve(gone + ".arrow"));
          saved.remove(gone);
        }
      }
    } catch (IOException e) {
      throw new UserException("the change is made but could not be written to " + dir + ": " + e.getMessage(), e);
    }
  }

  private void write(GpuSession session, String table) throws IOException {
    Path target = dir.resolve(table + ".arrow");
    Path tmp = dir.resolve("." + table + ".arrow.tmp");
    try (VectorSchemaRoot rows = session.query("SELECT * FROM \"" + table.replace("\"", "\"\"") + "\"");
        FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE);
        ArrowFileWriter writer = new ArrowFileWriter(rows, null, ch)) {
      writer.start();
      writer.writeBatch();
      writer.end();
      ch.force(true);
    }
    try {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    }
    for (String ext : OTHER_FORMATS) {
      for (String name : List.of(table + ext, table + ext.toUpperCase(java.util.Locale.ROOT))) {
        Path other = dir.resolve(name);
        if (Files.exists(other)) {
          Files.createDirectories(dir.resolve(".superseded"));
          Files.move(other, dir.resolve(".superseded").resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }
}
