package dev.gpudf.flight;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.files.TableNames;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory a server loaded its tables from, kept in step with the catalog: after every
 * update or ingest, each table whose rows changed is written to its file ({@link TableNames}: the
 * name encoded, so no table name reaches outside the directory), through a temporary file renamed
 * over the old one, so a crash leaves the old or the new file, never half of one; a dropped
 * table's file is removed; so a restarted server finds the same tables. Temporary files a crash
 * left are removed at start. A table that came from a CSV or Parquet file and then changed
 * supersedes it: that file moves to {@code .superseded/}, since two files of one name would clash
 * on the next start (so does a dropped one's). A table that cannot be written does not stop the
 * others: each is tried, the failures go to the statement that caused them, and the write is tried
 * again at each later change.
 */
final class DataDirectory {
  private static final Logger LOG = LoggerFactory.getLogger(DataDirectory.class);
  private static final String TEMP_SUFFIX = ".arrow.tmp";
  private static final List<String> OTHER_FORMATS = List.of(".csv", ".parquet");
  private final Path dir;
  private final Map<String, Long> saved = new HashMap<>();
  // tables whose last write failed: retried at each change, and reported to the statement that failed
  private final java.util.Set<String> failing = new java.util.HashSet<>();

  /** A directory whose tables {@code session} has just loaded (so they need no writing yet). */
  DataDirectory(Path dir, GpuSession session) {
    this.dir = dir;
    saved.putAll(session.catalog().versions());
    try (DirectoryStream<Path> temps = Files.newDirectoryStream(dir, "." + "*" + TEMP_SUFFIX)) {
      for (Path t : temps) {
        if (Files.isRegularFile(t, LinkOption.NOFOLLOW_LINKS)) {
          LOG.info("removing {}, left by a write that did not finish", t);
          Files.delete(t);
        }
      }
    } catch (IOException e) {
      throw new UserException("cannot clean temporary files in " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Writes what changed in {@code session}'s catalog since the last call; the caller has just changed it. */
  synchronized void sync(GpuSession session) {
    Map<String, Long> now = session.catalog().versions();
    List<String> failed = new ArrayList<>();
    for (Map.Entry<String, Long> t : now.entrySet()) {
      if (!t.getValue().equals(saved.get(t.getKey()))) {
        try {
          write(session, t.getKey());
          saved.put(t.getKey(), t.getValue());
          failing.remove(t.getKey());
        } catch (IOException | RuntimeException e) {
          failed(t.getKey(), "table '" + t.getKey() + "': " + e.getMessage(), failed);
        }
      }
    }
    for (String gone : List.copyOf(saved.keySet())) {
      if (!now.containsKey(gone)) {
        try {
          Files.deleteIfExists(file(gone, ".arrow"));
          supersede(gone);
          saved.remove(gone);
          failing.remove(gone);
        } catch (IOException e) {
          failed(gone, "dropped table '" + gone + "': " + e.getMessage(), failed);
        }
      }
    }
    if (!failed.isEmpty()) {
      throw new UserException("the change is made but could not be written to " + dir + ": " + String.join("; ", failed));
    }
  }

  /**
   * Notes a failed write: a table's first failure goes to the statement that made the change; a
   * retry that fails again is only logged, so one bad table does not fail every later statement.
   */
  private void failed(String table, String why, List<String> report) {
    if (failing.add(table)) {
      report.add(why);
    } else {
      LOG.warn("still cannot write {}: {}", dir, why);
    }
  }

  private Path file(String table, String extension) {
    return dir.resolve(TableNames.fileStem(table) + extension);
  }

  private void write(GpuSession session, String table) throws IOException {
    Path target = file(table, ".arrow");
    Path tmp = dir.resolve("." + TableNames.fileStem(table) + TEMP_SUFFIX);
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
    supersede(table);
  }

  /**
   * Moves the CSV and Parquet files and the directories of files that load as {@code table} (its name in any case) to
   * {@code .superseded/}: its rows are now in its Arrow file, or it was dropped.
   */
  private void supersede(String table) throws IOException {
    List<Path> others = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        String lower = name.toLowerCase(Locale.ROOT);
        if (!name.startsWith(".") && Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS)
            && TableNames.tableName(name).toLowerCase(Locale.ROOT).equals(table)) {
          others.add(f);
        }
        for (String ext : OTHER_FORMATS) {
          if (lower.endsWith(ext) && !name.startsWith(".")
              && TableNames.tableName(name.substring(0, name.length() - ext.length())).toLowerCase(Locale.ROOT).equals(table)) {
            others.add(f);
          }
        }
      }
    }
    for (Path other : others) {
      Files.createDirectories(dir.resolve(".superseded"));
      Files.move(other, dir.resolve(".superseded").resolve(other.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
  }
}
