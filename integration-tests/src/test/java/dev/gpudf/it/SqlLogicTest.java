package dev.gpudf.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A sqllogictest runner (SQLite's format) over a JDBC connection: {@code statement ok|error},
 * {@code query <types> <nosort|rowsort|valuesort>} with expected values or {@code N values
 * hashing to MD5}, {@code hash-threshold}, {@code skipif}/{@code onlyif} (gpudf is none of the
 * databases named, so {@code onlyif} records are skipped), {@code halt}.
 */
final class SqlLogicTest {
  private static final Pattern HASHED = Pattern.compile("(\\d+) values hashing to ([0-9a-f]{32})");

  /** What a script did: records that passed, failed (wrong answer or status) and errored (refused or broke). */
  record Outcome(int statementsOk, int statementsFailed, int queriesPassed, int queriesFailed, int queriesErrored,
      List<String> firstProblems) {
    int queries() {
      return queriesPassed + queriesFailed + queriesErrored;
    }

    String summary(String name) {
      return String.format(Locale.ROOT, "%s: statements %d ok, %d failed; queries %d/%d passed (%.1f%%), %d wrong, %d errors",
          name, statementsOk, statementsFailed, queriesPassed, queries(), 100.0 * queriesPassed / Math.max(1, queries()),
          queriesFailed, queriesErrored);
    }
  }

  private SqlLogicTest() {}

  /** A corpus file from the {@code sql-logic-test} jar, such as {@code test/select1.test}. */
  static Reader corpus(String path) {
    InputStream in = SqlLogicTest.class.getClassLoader().getResourceAsStream(path);
    if (in == null) {
      throw new IllegalArgumentException("no sqllogictest file " + path + " on the class path");
    }
    return new InputStreamReader(in, StandardCharsets.UTF_8);
  }

  static Outcome run(Connection c, Reader script) throws IOException {
    List<String> lines = new BufferedReader(script).lines().toList();
    int stOk = 0;
    int stFailed = 0;
    int passed = 0;
    int failed = 0;
    int errored = 0;
    List<String> problems = new ArrayList<>();
    int i = 0;
    while (i < lines.size()) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        i++;
        continue;
      }
      // a record: condition lines, a header, then its SQL and expected part up to a blank line
      boolean skip = false;
      while (line.startsWith("skipif") || line.startsWith("onlyif")) {
        skip |= line.startsWith("onlyif");
        line = lines.get(++i).strip();
      }
      int start = i;
      int end = start;
      while (end < lines.size() && !lines.get(end).isBlank()) {
        end++;
      }
      i = end;
      if (line.equals("halt")) {
        break;
      }
      if (line.startsWith("hash-threshold")) {
        // the expected part already says whether it is hashed; the threshold adds nothing to check
        continue;
      }
      if (skip) {
        continue;
      }
      List<String> body = lines.subList(start + 1, end);
      String[] header = line.split("\\s+");
      if (header[0].equals("statement")) {
        String sql = String.join("\n", body);
        boolean ok;
        try (Statement st = c.createStatement()) {
          st.execute(sql);
          ok = true;
        } catch (SQLException e) {
          ok = false;
        }
        if (ok == header[1].equals("ok")) {
          stOk++;
        } else {
          stFailed++;
          note(problems, "statement " + header[1] + " at line " + (start + 1) + ": " + sql);
        }
      } else if (header[0].equals("query")) {
        int sep = body.indexOf("----");
        String sql = String.join("\n", sep < 0 ? body : body.subList(0, sep));
        List<String> expected = sep < 0 ? List.of() : body.subList(sep + 1, body.size());
        try {
          List<String> got = query(c, sql, header[1], header.length > 2 ? header[2] : "nosort");
          if (matches(got, expected)) {
            passed++;
          } else {
            failed++;
            note(problems, "wrong at line " + (start + 1) + ": " + sql + "\n  want " + expected + "\n  got  " + got);
          }
        } catch (SQLException | RuntimeException | AssertionError e) {
          // an assertion inside Calcite (tests run with -ea) is counted and listed, not fatal to the file
          errored++;
          note(problems, "error at line " + (start + 1) + ": " + sql + "\n  " + e.getMessage());
        }
      } else {
        throw new IllegalArgumentException("unknown record at line " + (start + 1) + ": " + line);
      }
    }
    return new Outcome(stOk, stFailed, passed, failed, errored, problems);
  }

  private static void note(List<String> problems, String problem) {
    if (problems.size() < 20) {
      problems.add(problem);
    }
  }

  private static List<String> query(Connection c, String sql, String types, String sort) throws SQLException {
    List<List<String>> rows = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      if (n != types.length()) {
        throw new SQLException(n + " columns, the test expects " + types.length());
      }
      while (rs.next()) {
        List<String> row = new ArrayList<>();
        for (int k = 0; k < n; k++) {
          row.add(value(rs, k + 1, types.charAt(k)));
        }
        rows.add(row);
      }
    }
    List<String> values = new ArrayList<>();
    if (sort.equals("rowsort")) {
      rows.sort(Comparator.comparing((List<String> r) -> String.join(" ", r)));
    }
    rows.forEach(values::addAll);
    if (sort.equals("valuesort")) {
      values.sort(Comparator.naturalOrder());
    }
    return values;
  }

  /** A value as sqllogictest prints it: integers whole, reals with three decimals, empty text as (empty). */
  private static String value(ResultSet rs, int column, char type) throws SQLException {
    Object v = rs.getObject(column);
    if (v == null) {
      return "NULL";
    }
    return switch (type) {
      case 'I' -> v instanceof Number num ? Long.toString(num.longValue()) : v.toString();
      case 'R' -> String.format(Locale.ROOT, "%.3f", ((Number) v).doubleValue());
      default -> {
        String s = v.toString();
        StringBuilder out = new StringBuilder();
        for (char ch : s.toCharArray()) {
          out.append(ch < ' ' || ch > '~' ? '@' : ch);
        }
        yield s.isEmpty() ? "(empty)" : out.toString();
      }
    };
  }

  private static boolean matches(List<String> got, List<String> expected) {
    if (expected.size() == 1) {
      Matcher m = HASHED.matcher(expected.get(0).strip());
      if (m.matches()) {
        return Integer.parseInt(m.group(1)) == got.size() && md5(got).equals(m.group(2));
      }
    }
    return got.equals(expected.stream().map(String::strip).toList());
  }

  private static String md5(List<String> values) {
    try {
      MessageDigest md = MessageDigest.getInstance("MD5");
      for (String v : values) {
        md.update((v + "\n").getBytes(StandardCharsets.UTF_8));
      }
      return String.format("%032x", new BigInteger(1, md.digest()));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
