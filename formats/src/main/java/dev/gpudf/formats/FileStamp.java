package dev.gpudf.formats;

import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * A file's size and modification time when a table was opened over it: a source checks it before
 * each read, so a file that changed since is an error naming it, never a mix of old and new rows.
 */
public record FileStamp(Path file, long size, FileTime modified) {
  /** {@code file}'s stamp now. */
  public static FileStamp of(Path file) throws IOException {
    BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
    return new FileStamp(file, a.size(), a.lastModifiedTime());
  }

  /** A {@link UserException} unless the file still has this size and modification time. */
  public void check() {
    FileStamp now;
    try {
      now = of(file);
    } catch (IOException e) {
      throw new UserException("cannot read " + file + ": " + e.getMessage(), e);
    }
    if (now.size != size || !now.modified.equals(modified)) {
      throw new UserException(file + " changed since it was opened (size " + size + " -> " + now.size
          + "): reopen the table to read it again");
    }
  }
}
