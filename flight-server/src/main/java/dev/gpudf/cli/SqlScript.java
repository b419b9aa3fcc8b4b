package dev.gpudf.cli;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.List;

/**
 * A script of SQL statements split at the semicolons that end them: a semicolon inside a quoted
 * string ('...' or "..."), a {@code --} line comment or a {@code /* *}{@code /} block comment
 * does not end a statement. Statements that are only comments and blanks are dropped.
 */
final class SqlScript {
  /** One statement of a script and the line (1-based) it starts on. */
  record Statement(String sql, int line) {}

  private SqlScript() {}

  /** The statements of {@code script}; an unterminated quote or block comment is a {@link UserException}. */
  static List<Statement> split(String script) {
    List<Statement> out = new ArrayList<>();
    int start = 0;
    int line = 1;
    int startLine = 1;
    boolean content = false;
    int n = script.length();
    for (int i = 0; i < n; i++) {
      char c = script.charAt(i);
      if (c == '\n') {
        line++;
      } else if (c == '-' && i + 1 < n && script.charAt(i + 1) == '-') {
        int end = script.indexOf('\n', i);
        i = (end < 0 ? n : end) - 1;
      } else if (c == '/' && i + 1 < n && script.charAt(i + 1) == '*') {
        int end = script.indexOf("*/", i + 2);
        if (end < 0) {
          throw new UserException("line " + line + ": a /* comment is not closed");
        }
        line += count(script, i, end);
        i = end + 1;
      } else if (c == '\'' || c == '"') {
        // a quote inside is doubled ('it''s'), which this reads as two strings back to back
        int end = script.indexOf(c, i + 1);
        if (end < 0) {
          throw new UserException("line " + line + ": a " + c + " quote is not closed");
        }
        content = true;
        line += count(script, i, end);
        i = end;
      } else if (c == ';') {
        if (content) {
          out.add(new Statement(script.substring(start, i).strip(), startLine));
        }
        start = i + 1;
        content = false;
      } else if (!Character.isWhitespace(c)) {
        if (!content) {
          startLine = line;
        }
        content = true;
      }
    }
    if (content) {
      out.add(new Statement(script.substring(start).strip(), startLine));
    }
    return out;
  }

  private static int count(String s, int from, int to) {
    int k = 0;
    for (int i = from; i < to; i++) {
      k += s.charAt(i) == '\n' ? 1 : 0;
    }
    return k;
  }
}
