package dev.gpudf.sql;

import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;

/**
 * {@code read_parquet('glob')}, {@code read_csv('glob')} and {@code read_arrow('glob')} in a
 * statement's FROM clause, as DuckDB writes them: the files the glob matches inside the session's
 * data directory ({@link dev.gpudf.sql.files.FileGlob}) become a hidden catalog table, whose name
 * replaces the call before the statement is parsed. The table is kept for the next statement
 * naming the same glob while the same files, of the same sizes and times, match it.
 */
final class FileFunctions {
  private static final Pattern CALL = Pattern.compile("(?i)\\bread_(parquet|csv|arrow)\\s*\\(\\s*'((?:[^']|'')*)'\\s*\\)");

  private record Opened(String table, List<Object> files) {}

  private final Catalog catalog;
  private final BufferAllocator allocator;
  private final Map<String, Opened> opened = new HashMap<>();

  FileFunctions(Catalog catalog, BufferAllocator allocator) {
    this.catalog = catalog;
    this.allocator = allocator;
  }

  /** {@code sql} with each file function call replaced by its table's name (unchanged when it has none). */
  synchronized String rewrite(String sql) {
    Matcher m = CALL.matcher(sql);
    if (!m.find()) {
      return sql;
    }
    Path dir = catalog.dataDirectory();
    if (dir == null) {
      throw new UserException(m.group() + ": files are read from the data directory of a session opened over one"
          + " (path=DIR); this session has none");
    }
    boolean[] quoted = quotedOrComment(sql);
    StringBuilder out = new StringBuilder();
    do {
      if (quoted[m.start()]) {
        // inside a string, a quoted name or a comment: text, not a call
        m.appendReplacement(out, Matcher.quoteReplacement(m.group()));
        continue;
      }
      String format = m.group(1).toLowerCase(java.util.Locale.ROOT);
      String glob = m.group(2).replace("''", "'");
      m.appendReplacement(out, Matcher.quoteReplacement(table(dir, format, glob)));
    } while (m.find());
    m.appendTail(out);
    return out.toString();
  }

  /** For each character of {@code sql}: whether it lies inside a '...' string, a "..." name or a comment. */
  static boolean[] quotedOrComment(String sql) {
    boolean[] in = new boolean[sql.length() + 1];
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      int end = -1;
      if (c == '\'' || c == '"') {
        // a doubled quote inside reads as two strings back to back, which covers the same span
        end = sql.indexOf(c, i + 1);
      } else if (c == '-' && sql.startsWith("--", i)) {
        end = sql.indexOf('\n', i);
      } else if (c == '/' && sql.startsWith("/*", i)) {
        end = sql.indexOf("*/", i + 2);
        end = end < 0 ? -1 : end + 1;
      }
      if (c == '\'' || c == '"' || sql.startsWith("--", i) || sql.startsWith("/*", i)) {
        int stop = end < 0 ? sql.length() - 1 : end;
        java.util.Arrays.fill(in, i, stop + 1, true);
        i = stop;
      }
    }
    return in;
  }

  private String table(Path dir, String format, String glob) {
    List<Path> files = dev.gpudf.sql.files.FileGlob.match(dir, glob);
    List<Object> signature = new ArrayList<>();
    for (Path f : files) {
      try {
        signature.add(List.of(f.toString(), Files.size(f), Files.getLastModifiedTime(f).toMillis()));
      } catch (IOException e) {
        throw new UserException("cannot read " + f + ": " + e.getMessage(), e);
      }
    }
    String key = format + ":" + glob;
    Opened known = opened.get(key);
    boolean exists = known != null && catalog.shapes().containsKey(known.table());
    if (exists && known.files().equals(signature)) {
      return quoted(known.table());
    }
    if (exists) {
      catalog.drop(known.table());
    }
    String table = FileTables.register(catalog, null, format, dir, files, allocator, FileTables.chunkRows(catalog));
    opened.put(key, new Opened(table, signature));
    return quoted(table);
  }

  private static String quoted(String table) {
    return '"' + table + '"';
  }

  /** {@code sql} with each file function call replaced by a placeholder table name, for parsing only (nothing is read). */
  static String placeholders(String sql) {
    boolean[] quoted = quotedOrComment(sql);
    return CALL.matcher(sql).replaceAll(r -> quoted[r.start()] ? Matcher.quoteReplacement(r.group()) : "\"\\$files\"");
  }
}
