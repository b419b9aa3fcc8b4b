package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.calcite.rel.type.RelDataTypeField;

/**
 * The statements users type to look around, which Calcite's grammar lacks or leaves unplanned,
 * as the literal rows that answer them: {@code SHOW TABLES} (a column {@code name}) and
 * {@code DESCRIBE t}, {@code DESCRIBE TABLE t}, {@code DESC t} or {@code DESCRIBE query} (columns
 * {@code column_name}, {@code column_type}, {@code null}: YES or NO), as DuckDB answers them. Each
 * runs as a query through every client, of rows made when it runs (no text to parse, so a table of
 * any width or a catalog of any size is described whole).
 */
final class ShowStatements {
  private ShowStatements() {}

  private static final Pattern SHOW_TABLES = Pattern.compile("\\s*+SHOW\\s++TABLES\\s*+;?\\s*+", Pattern.CASE_INSENSITIVE);
  // greedy, the ';' and blanks at the end taken off after the match: a lazy group before them
  // would take time quadratic in a run of blanks
  private static final Pattern DESCRIBE = Pattern.compile("\\s*+(?:DESCRIBE|DESC)\\s++(.*)",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern QUERY = Pattern.compile("(?:SELECT|WITH|VALUES)\\b.*", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern TABLE = Pattern.compile("(?:TABLE\\s++)?(\\w++|\"(?:[^\"]|\"\")++\")", Pattern.CASE_INSENSITIVE);

  /** Whether {@code sql} is one of these statements. */
  static boolean matches(String sql) {
    return SHOW_TABLES.matcher(sql).matches() || DESCRIBE.matcher(sql).matches();
  }

  /** Rows of strings under column names {@code names}. */
  record Rows(List<String> names, List<List<String>> rows) {}

  /** The rows answering {@code sql} over {@code session}'s catalog, or null where it is none of these statements. */
  static Rows rows(GpuSession session, String sql) {
    if (SHOW_TABLES.matcher(sql).matches()) {
      List<List<String>> rows = new ArrayList<>();
      session.catalog().names().stream().sorted().forEach(n -> rows.add(List.of(n)));
      return new Rows(List.of("name"), rows);
    }
    Matcher d = DESCRIBE.matcher(sql);
    if (!d.matches()) {
      return null;
    }
    String what = d.group(1).strip();
    if (what.endsWith(";")) {
      what = what.substring(0, what.length() - 1).strip();
    }
    String described;
    // a table's declared NOT NULL and VARCHAR(n), which queries over it do not carry
    TableConstraints constraints = TableConstraints.NONE;
    if (QUERY.matcher(what).matches()) {
      // the words before the query blanked, lines kept: a message's positions stay the statement's
      described = sql.substring(0, d.start(1)).replaceAll("[^\n]", " ") + what;
    } else {
      Matcher t = TABLE.matcher(what);
      if (!t.matches()) {
        String shown = what.length() > 60 ? what.substring(0, 60) + "..." : what;
        throw new dev.gpudf.columnar.error.UserException("DESCRIBE takes a table name or a query, not '" + shown + "'");
      }
      String quoted = t.group(1);
      String name = quoted.startsWith("\"") ? quoted.substring(1, quoted.length() - 1).replace("\"\"", "\"")
          : quoted.toLowerCase(Locale.ROOT);
      if (!session.catalog().names().contains(name.toLowerCase(Locale.ROOT))) {
        throw new dev.gpudf.columnar.error.UserException("no table '" + name + "'");
      }
      described = "SELECT * FROM \"" + name.replace("\"", "\"\"") + "\"";
      constraints = session.catalog().constraints(name.toLowerCase(Locale.ROOT));
    }
    List<List<String>> rows = new ArrayList<>();
    // planned as the query would be (file functions, the plan cache): its columns as clients see them
    for (RelDataTypeField f : session.resultType(described).getFieldList()) {
      Integer chars = constraints.maxChars().get(f.getName());
      String type = chars != null ? "VARCHAR(" + chars + ")" : f.getType().getFullTypeString().replace(" NOT NULL", "");
      boolean nullable = f.getType().isNullable() && !constraints.notNull().contains(f.getName());
      rows.add(List.of(f.getName(), type, nullable ? "YES" : "NO"));
    }
    return new Rows(List.of("column_name", "column_type", "null"), rows);
  }
}
