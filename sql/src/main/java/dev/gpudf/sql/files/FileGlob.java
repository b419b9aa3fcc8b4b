package dev.gpudf.sql.files;

import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The files a glob names inside a data directory ({@code *.parquet}, {@code sales/**}{@code /*.parquet},
 * {@code part-?.csv}), sorted by path. Only regular files under the directory match, none under a
 * name starting with a dot (temporary and superseded files): links are not
 * followed, the walk is bounded in depth and in files, and a pattern that is absolute or climbs
 * out with {@code ..} is refused.
 */
public final class FileGlob {
  /** Directory levels a glob is matched through, and files it may match. */
  public static final int MAX_DEPTH = 16;
  public static final int MAX_FILES = 100_000;

  private FileGlob() {}

  /** Whether a part of {@code rel} starts with a dot: temporary files of a write, superseded files, .git. */
  private static boolean hidden(Path rel) {
    for (Path part : rel) {
      if (part.toString().startsWith(".")) {
        return true;
      }
    }
    return false;
  }

  /** The matching files of {@code dir}, at least one; a {@link UserException} otherwise. */
  public static List<Path> match(Path dir, String glob) {
    if (glob.isEmpty() || glob.startsWith("/") || glob.startsWith("\\") || glob.contains("..") || glob.indexOf('\0') >= 0
        || glob.matches("^[A-Za-z]:.*")) {
      throw new UserException("'" + glob + "' must be a pattern relative to the data directory " + dir
          + " (no absolute path, no ..)");
    }
    PathMatcher matcher;
    try {
      matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
    } catch (IllegalArgumentException e) {
      throw new UserException("'" + glob + "' is not a glob: " + e.getMessage(), e);
    }
    List<Path> out = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(dir, MAX_DEPTH)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        Path rel = dir.relativize(p);
        if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && !hidden(rel) && matcher.matches(rel)) {
          if (out.size() == MAX_FILES) {
            throw new UserException("'" + glob + "' matches more than " + MAX_FILES + " files");
          }
          out.add(p);
        }
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      throw new UserException("cannot list " + dir + ": " + e.getMessage(), e);
    }
    if (out.isEmpty()) {
      throw new UserException("no file in " + dir + " matches '" + glob + "'");
    }
    out.sort(null);
    return out;
  }
}
