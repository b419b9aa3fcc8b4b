package dev.gpudf.flight;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.sql.GpuSession;
import dev.gpudf.sql.files.AppendLog;
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
 * update or ingest, each table whose rows changed is saved before the statement is answered, so
 * a restarted server (after a crash or {@code kill -9} too) finds every change it answered.
 *
 * <p>A table is its Arrow file ({@link TableNames}: the name encoded, so no table name reaches
 * outside the directory) plus, when rows were only appended since that file was written, its
 * {@link AppendLog}: an INSERT adds one batch to the log instead of rewriting the file. Any other
 * change, and an append that would make the log larger than the file, writes the file whole,
 * through a temporary file renamed over the old one (a crash leaves the old or the new file,
 * never half of one). The file names its log ({@code gpudf.log} in its footer), so a log that a
 * crash left behind a newer file is known stale and removed, never applied twice. At start, each
 * table's log is replayed into the catalog (a torn last batch cut off) and temporary files are
 * removed. A dropped table's file and log are removed. A table that came from a CSV or Parquet file and then changed
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
  // rows of each table on disk (file and log), and the log id of each table whose file was written here
  private final Map<String, Long> savedRows = new HashMap<>();
  private final Map<String, String> logIds = new HashMap<>();
  private final java.security.SecureRandom random = new java.security.SecureRandom();
  // tables whose last write failed: retried at each change, and reported to the statement that failed
  private final java.util.Set<String> failing = new java.util.HashSet<>();

  /** A directory whose tables {@code session} has just loaded (so they need no writing yet). */
  DataDirectory(Path dir, GpuSession session) {
    this.dir = dir;
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
    repairLogs(session);
    saved.putAll(session.catalog().versions());
    for (String t : saved.keySet()) {
      savedRows.put(t, session.catalog().rowCount(t));
    }
  }

  /**
   * Notes the log id each table file written here names, removes the logs no file names (a crash
   * after a rewrite left them; the loader did not apply them) and cuts torn tails off the others
   * (the loader applied their whole batches), so that appends continue after whole batches.
   */
  private void repairLogs(GpuSession session) {
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.arrow")) {
      for (Path f : files) {
        String stem = f.getFileName().toString().replace(".arrow", "");
        String table = TableNames.tableName(stem).toLowerCase(Locale.ROOT);
        String id = AppendLog.logId(f, session.allocator());
        if (id != null && session.catalog().versions().containsKey(table)) {
          logIds.put(table, id);
        }
      }
      try (DirectoryStream<Path> logs = Files.newDirectoryStream(dir, ".*.log")) {
        for (Path log : logs) {
          if (!Files.isRegularFile(log, LinkOption.NOFOLLOW_LINKS)) {
            continue; // a link is never followed, to be cut or removed outside the directory
          }
          String name = log.getFileName().toString();
          String stemAndId = name.substring(1, name.length() - ".log".length());
          int dot = stemAndId.lastIndexOf('.');
          String table = dot < 0 ? "" : TableNames.tableName(stemAndId.substring(0, dot)).toLowerCase(Locale.ROOT);
          if (dot < 0 || !stemAndId.substring(dot + 1).equals(logIds.get(table))) {
            LOG.info("removing {}: no table file names it (a rewrite replaced it)", log);
            Files.delete(log);
          } else {
            AppendLog.repair(log, session.allocator());
          }
        }
      }
    } catch (IOException e) {
      throw new UserException("cannot read the append logs in " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Writes what changed in {@code session}'s catalog since the last call; the caller has just changed it. */
  synchronized void sync(GpuSession session) {
    Map<String, Long> now = session.catalog().versions();
    List<String> failed = new ArrayList<>();
    for (Map.Entry<String, Long> t : now.entrySet()) {
      if (!t.getValue().equals(saved.get(t.getKey()))) {
        try {
          save(session, t.getKey());
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
          deleteLogs(gone, null);
          supersede(gone);
          saved.remove(gone);
          savedRows.remove(gone);
          logIds.remove(gone);
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

  /**
   * Saves {@code table}'s change: the rows appended since it was saved go to its log when only
   * rows were appended and the log stays smaller than the file; otherwise the file is written whole.
   */
  private void save(GpuSession session, String table) throws IOException {
    Path file = file(table, ".arrow");
    String id = logIds.get(table);
    Long rows = savedRows.get(table);
    if (id != null && rows != null && saved.containsKey(table) && session.catalog().definedAt(table) <= saved.get(table)
        && Files.exists(file)) {
      Path log = AppendLog.path(dir, TableNames.fileStem(table), id);
      if (!Files.exists(log) || Files.size(log) < Files.size(file)) {
        try (VectorSchemaRoot added = session.catalog().rowsFrom(table, rows, session.allocator())) {
          if (added.getRowCount() > 0) {
            AppendLog.append(log, added);
          }
          savedRows.put(table, rows + added.getRowCount());
        }
        return;
      }
    }
    write(session, table);
  }

  /** Writes {@code table}'s file whole, naming a fresh (empty) log, then removes its older logs. */
  private void write(GpuSession session, String table) throws IOException {
    Path target = file(table, ".arrow");
    Path tmp = dir.resolve("." + TableNames.fileStem(table) + TEMP_SUFFIX);
    String id = Long.toHexString(random.nextLong() & Long.MAX_VALUE);
    long rows;
    try (VectorSchemaRoot all = session.query("SELECT * FROM \"" + table.replace("\"", "\"\"") + "\"");
        FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE);
        ArrowFileWriter writer = new ArrowFileWriter(all, null, ch, AppendLog.footer(id))) {
      writer.start();
      writer.writeBatch();
      writer.end();
      ch.force(true);
      rows = all.getRowCount();
    }
    try {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    }
    forceDirectory();
    logIds.put(table, id);
    savedRows.put(table, rows);
    deleteLogs(table, id);
    supersede(table);
  }

  /** Removes {@code table}'s append logs but the one of id {@code keep} (null: all). */
  private void deleteLogs(String table, String keep) throws IOException {
    String stem = TableNames.fileStem(table);
    try (DirectoryStream<Path> logs = Files.newDirectoryStream(dir, "." + stem + ".*.log")) {
      for (Path log : logs) {
        if (keep == null || !log.equals(AppendLog.path(dir, stem, keep))) {
          Files.delete(log);
        }
      }
    }
  }

  /** Forces the directory's entries (a rename) to disk, where the platform allows it. */
  private void forceDirectory() {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      LOG.debug("cannot force directory {} to disk: {}", dir, e.getMessage());
    }
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
