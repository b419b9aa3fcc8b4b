package dev.gpudf.sql.files;

import dev.gpudf.columnar.error.UserException;
import java.io.BufferedWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.math.BigDecimal;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.arrow.dataset.file.DatasetFileWriter;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;

/**
 * Writes query results to files inside a data directory, atomically: the rows go to a temporary
 * file beside the target, which is renamed over it only once complete, so a reader sees the old
 * file or the new one, never a part. Targets are checked before anything is written: a path that
 * leaves the directory (absolute elsewhere, {@code ..}, a link out of it) is refused.
 */
public final class FileWriter {
  /** The formats {@code COPY ... TO} writes. */
  public enum Format { PARQUET, CSV, ARROW }

  private FileWriter() {}

  /**
   * The file {@code target} names inside {@code dir}: relative paths are taken from {@code dir},
   * and the result, with its parent's links resolved, must lie inside {@code dir}'s real path.
   */
  public static Path inside(Path dir, String target) {
    if (target.isEmpty() || target.indexOf('\0') >= 0) {
      throw new UserException("COPY needs a file name, not '" + target + "'");
    }
    try {
      Path root = dir.toRealPath();
      Path file = root.resolve(target).normalize();
      Path parent = file.getParent();
      if (parent == null || !Files.isDirectory(parent)) {
        throw new UserException("cannot write '" + target + "': its directory does not exist");
      }
      Path real = parent.toRealPath().resolve(file.getFileName());
      if (!real.startsWith(root) || real.equals(root)) {
        throw new UserException("cannot write '" + target + "': files are written only inside the data directory " + dir);
      }
      if (Files.isDirectory(real, LinkOption.NOFOLLOW_LINKS) || Files.isSymbolicLink(real)) {
        throw new UserException("cannot write '" + target + "': it is a directory or a link");
      }
      return real;
    } catch (java.nio.file.InvalidPathException e) {
      throw new UserException("'" + target + "' is not a file name: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new UserException("cannot write '" + target + "': " + e.getMessage(), e);
    }
  }

  /** The format a file name's extension implies ({@code .parquet}, {@code .csv}, {@code .arrow}), or null. */
  public static Format formatOf(Path file) {
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    return name.endsWith(".parquet") ? Format.PARQUET : name.endsWith(".csv") ? Format.CSV
        : name.endsWith(".arrow") ? Format.ARROW : null;
  }

  /** Writes {@code rows} to {@code file} (already checked by {@link #inside}) in {@code format}, atomically. */
  public static void write(VectorSchemaRoot rows, Path file, Format format, BufferAllocator allocator) {
    Path dir = file.getParent();
    Path temp = null;
    try {
      if (format == Format.PARQUET) {
        // Arrow Dataset writes into a directory: a temporary one beside the target
        temp = Files.createTempDirectory(dir, "." + file.getFileName() + ".");
        parquet(rows, temp, allocator);
        Path written;
        try (Stream<Path> files = Files.list(temp)) {
          written = files.findFirst().orElseThrow(() -> new UserException("the Parquet writer wrote no file"));
        }
        Files.move(written, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } else {
        temp = Files.createTempFile(dir, "." + file.getFileName() + ".", ".tmp");
        if (format == Format.CSV) {
          try (Writer w = new BufferedWriter(new java.io.OutputStreamWriter(Files.newOutputStream(temp),
              StandardCharsets.UTF_8))) {
            csv(rows, w);
          }
        } else {
          try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE);
              ArrowFileWriter w = new ArrowFileWriter(rows, null, ch)) {
            w.start();
            w.writeBatch();
            w.end();
          }
        }
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      throw new UserException("cannot write " + file + ": " + e.getMessage(), e);
    } finally {
      if (temp != null) {
        deleteQuietly(temp);
      }
    }
  }

  private static void parquet(VectorSchemaRoot rows, Path into, BufferAllocator allocator) throws IOException {
    // the writer takes a reader: the rows go through one IPC stream in memory
    ByteArrayOutputStream ipc = new ByteArrayOutputStream();
    try (OutputStream out = ipc; ArrowStreamWriter w = new ArrowStreamWriter(rows, null, Channels.newChannel(out))) {
      w.start();
      w.writeBatch();
      w.end();
    }
    try (BufferAllocator batches = allocator.newChildAllocator("parquet-writer", 0, Long.MAX_VALUE)) {
      try (ArrowReader reader = new ArrowStreamReader(new ByteArrayInputStream(ipc.toByteArray()), batches)) {
        DatasetFileWriter.write(batches, reader, FileFormat.PARQUET, into.toUri().toString(), new String[0], 1,
            "part-{i}.parquet");
      } catch (RuntimeException e) {
        throw new UserException("the Parquet writer failed: " + e.getMessage(), e);
      } finally {
        // a failed write may have handed batches over too
        awaitReleased(batches);
      }
    }
  }

  /**
   * Arrow Dataset's native writer releases the last batch it was handed from a thread of its own,
   * after {@code write} returned (a test saw the release reach an allocator already closed): wait
   * for it, up to 10 s; past that the allocator's close reports the leak.
   */
  private static void awaitReleased(BufferAllocator batches) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (batches.getAllocatedMemory() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new dev.gpudf.columnar.error.InternalException("interrupted while the Parquet writer released its batches", e);
      }
    }
  }

  /** RFC 4180: a header row of names, then one line a row; NULL is an empty field. */
  private static void csv(VectorSchemaRoot rows, Writer w) throws IOException {
    int n = rows.getFieldVectors().size();
    for (int c = 0; c < n; c++) {
      w.write(c > 0 ? "," : "");
      w.write(field(rows.getVector(c).getName()));
    }
    w.write("\r\n");
    for (int r = 0; r < rows.getRowCount(); r++) {
      for (int c = 0; c < n; c++) {
        w.write(c > 0 ? "," : "");
        FieldVector v = rows.getVector(c);
        if (!v.isNull(r)) {
          Object o = v.getObject(r);
          w.write(field(o instanceof BigDecimal d ? d.toPlainString() : o instanceof Integer days
              && v instanceof org.apache.arrow.vector.DateDayVector ? java.time.LocalDate.ofEpochDay(days).toString()
              : o.toString()));
        }
      }
      w.write("\r\n");
    }
  }

  /** A CSV field: quoted when it holds a comma, a quote, a line break, or nothing (an empty string, not NULL). */
  private static String field(String s) {
    if (s.isEmpty() || s.chars().anyMatch(ch -> ch == ',' || ch == '"' || ch == '\n' || ch == '\r')) {
      return '"' + s.replace("\"", "\"\"") + '"';
    }
    return s;
  }

  private static void deleteQuietly(Path p) {
    try {
      if (Files.isDirectory(p)) {
        try (Stream<Path> files = Files.list(p)) {
          for (Path f : files.toList()) {
            Files.deleteIfExists(f);
          }
        }
      }
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // a temporary file left behind is named by its leading dot and the target's name; the
      // write itself has already succeeded or reported its own error
      System.getLogger(FileWriter.class.getName()).log(System.Logger.Level.WARNING, "cannot remove " + p, e);
    }
  }
}
