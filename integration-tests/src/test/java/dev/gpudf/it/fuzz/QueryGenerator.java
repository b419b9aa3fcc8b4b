package dev.gpudf.it.fuzz;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random tables and random queries over them, in SQL that gpudf and DuckDB both read with one
 * meaning: small integers (no overflow), DECIMAL(10, 2), short strings with non-ASCII letters,
 * dates, booleans, NULLs in every column, duplicate rows, empty tables. No division, floats,
 * LIMIT or functions whose edge cases the two define differently, so any difference in answers is
 * a bug of one of them.
 */
final class QueryGenerator {
  private static final String[] WORDS = {"a", "ab", "B", "é", "日本", "x y", "", "Ab", "zz", "é1"};

  private final Random random;

  QueryGenerator(long seed) {
    random = new Random(seed);
  }

  /** The statements that create and fill table {@code name} (k INTEGER, i INTEGER, n DECIMAL(10, 2), s VARCHAR, d DATE, b BOOLEAN). */
  List<String> table(String name) {
    List<String> out = new ArrayList<>();
    out.add("CREATE TABLE " + name + " (k INTEGER, i INTEGER, n DECIMAL(10, 2), s VARCHAR, d DATE, b BOOLEAN)");
    int rows = random.nextInt(5) == 0 ? 0 : random.nextInt(25);
    List<String> values = new ArrayList<>();
    for (int r = 0; r < rows; r++) {
      String row = "(" + nullable(String.valueOf(random.nextInt(6))) + ", " + nullable(String.valueOf(random.nextInt(41) - 20))
          + ", " + nullable("CAST(" + (random.nextInt(20001) - 10000) / 100.0 + " AS DECIMAL(10, 2))") + ", "
          + nullable("'" + WORDS[random.nextInt(WORDS.length)] + "'") + ", "
          + nullable("DATE '2020-01-" + String.format("%02d", 1 + random.nextInt(28)) + "'") + ", "
          + nullable(random.nextBoolean() ? "TRUE" : "FALSE") + ")";
      values.add(row);
      if (random.nextInt(6) == 0) {
        values.add(row);
      }
    }
    if (!values.isEmpty()) {
      out.add("INSERT INTO " + name + " VALUES " + String.join(", ", values));
    }
    return out;
  }

  private String nullable(String value) {
    return random.nextInt(6) == 0 ? "NULL" : value;
  }

  /** A query over t1 and t2, and for the partition check its FROM-WHERE-free form and a predicate. */
  record Query(String sql, String select, String from, String predicate) {}

  Query next() {
    String a = "t1";
    String from = "t1";
    List<String> tables = List.of(a);
    int shape = random.nextInt(11);
    if (shape == 10) {
      return window();
    }
    if (shape >= 6) {
      String join = random.nextBoolean() ? " JOIN " : " LEFT JOIN ";
      from = "t1" + join + "t2 ON t1.k = t2.k" + (random.nextInt(3) == 0 ? " AND " + predicate(List.of("t1", "t2"), 1) : "");
      tables = List.of("t1", "t2");
    }
    String where = predicate(tables, 3);
    if (shape == 0 || shape == 6) {
      String select = "COUNT(*), COUNT(" + column(tables, "s") + "), SUM(" + numeric(tables, 1) + "), MIN("
          + column(tables, "d") + "), MAX(" + column(tables, "s") + "), AVG(" + column(tables, random.nextBoolean() ? "i" : "n")
          + ")";
      return new Query("SELECT " + select + " FROM " + from + " WHERE " + where, null, null, null);
    }
    if (shape == 1 || shape == 7) {
      String g = random.nextBoolean() ? column(tables, "k") : column(tables, "b");
      String having = random.nextBoolean() ? " HAVING COUNT(*) > 1" : "";
      return new Query("SELECT " + g + ", COUNT(*), SUM(" + column(tables, "n") + "), MIN(" + column(tables, "i") + ") FROM "
          + from + " WHERE " + where + " GROUP BY " + g + having, null, null, null);
    }
    if (shape == 2) {
      String other = "SELECT k, " + numeric(List.of("t2"), 1).replace("t2.", "") + " FROM t2 WHERE "
          + predicate(List.of("t2"), 2).replace("t2.", "");
      String op = new String[] {"UNION ALL", "UNION", "EXCEPT", "INTERSECT"}[random.nextInt(4)];
      return new Query("SELECT k, " + numeric(List.of("t1"), 1).replace("t1.", "") + " FROM t1 WHERE "
          + predicate(List.of("t1"), 2).replace("t1.", "") + " " + op + " " + other, null, null, null);
    }
    if (shape == 3) {
      String sub = random.nextBoolean()
          ? column(tables, "k") + (random.nextBoolean() ? " IN " : " NOT IN ") + "(SELECT k FROM t2 WHERE "
              + predicate(List.of("t2"), 1) + ")"
          : (random.nextBoolean() ? "EXISTS" : "NOT EXISTS") + " (SELECT 1 FROM t2 WHERE t2.k = t1.k AND "
              + predicate(List.of("t2"), 1) + ")";
      String select = column(tables, "k") + ", " + column(tables, "s");
      return new Query("SELECT " + select + " FROM " + from + " WHERE " + sub, select, from, sub);
    }
    String select = (random.nextInt(4) == 0 ? "DISTINCT " : "") + expression(tables) + ", " + expression(tables);
    return new Query("SELECT " + select + " FROM " + from + " WHERE " + where, select.startsWith("DISTINCT") ? null : select,
        from, where);
  }

  /** Window functions whose answers ties cannot change (ranks, and sums over RANGE frames, which take all peers). */
  private Query window() {
    // a DESC order names where its NULLs go: PostgreSQL and gpudf put them first, DuckDB last
    boolean desc = random.nextBoolean();
    String order = new String[] {"i", "s", "d", "n"}[random.nextInt(4)] + (desc ? " DESC" : " ASC")
        + new String[] {desc ? " NULLS LAST" : "", " NULLS FIRST", " NULLS LAST"}[random.nextInt(3)];
    String partition = random.nextBoolean() ? "PARTITION BY k " : "";
    String f = switch (random.nextInt(10)) {
      case 0 -> "RANK()";
      case 1 -> "DENSE_RANK()";
      case 2 -> "SUM(n)";
      case 3 -> "COUNT(s)";
      case 4 -> "PERCENT_RANK()";
      case 5 -> "CUME_DIST()";
      case 6 -> "MAX(n)";
      case 7 -> "AVG(i)";
      case 8 -> "COUNT(*)";
      default -> "MIN(i)";
    };
    String frame = f.endsWith("()") || random.nextBoolean() ? ""
        : " RANGE BETWEEN " + new String[] {"UNBOUNDED PRECEDING AND CURRENT ROW", "CURRENT ROW AND UNBOUNDED FOLLOWING",
            "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING", "CURRENT ROW AND CURRENT ROW"}[random.nextInt(4)];
    String select = "k, " + order.split(" ")[0] + ", " + f + " OVER (" + partition + "ORDER BY " + order + frame + ")";
    return new Query("SELECT " + select + " FROM t1 WHERE " + predicate(List.of("t1"), 2).replace("t1.", ""), null, null, null);
  }

  private String column(List<String> tables, String name) {
    return tables.get(random.nextInt(tables.size())) + "." + name;
  }

  private String numeric(List<String> tables, int depth) {
    int pick = random.nextInt(depth <= 0 ? 3 : 7);
    return switch (pick) {
      case 0 -> column(tables, "i");
      case 1 -> column(tables, "n");
      case 2 -> String.valueOf(random.nextInt(21) - 10);
      case 3 -> "(" + numeric(tables, depth - 1) + (random.nextBoolean() ? " + " : " - ") + numeric(tables, depth - 1) + ")";
      case 4 -> "(" + numeric(tables, depth - 1) + " * " + (random.nextInt(7) - 3) + ")";
      case 5 -> "COALESCE(" + numeric(tables, depth - 1) + ", " + numeric(tables, 0) + ")";
      default -> "CASE WHEN " + predicate(tables, depth - 1) + " THEN " + numeric(tables, depth - 1) + " ELSE "
          + numeric(tables, depth - 1) + " END";
    };
  }

  private String text(List<String> tables) {
    return switch (random.nextInt(5)) {
      case 0, 1 -> column(tables, "s");
      case 2 -> "UPPER(" + column(tables, "s") + ")";
      case 3 -> column(tables, "s") + " || '" + WORDS[random.nextInt(WORDS.length)] + "'";
      default -> "SUBSTRING(" + column(tables, "s") + " FROM " + (1 + random.nextInt(2)) + " FOR " + (1 + random.nextInt(2)) + ")";
    };
  }

  private String expression(List<String> tables) {
    return switch (random.nextInt(6)) {
      case 0, 1 -> numeric(tables, 2);
      case 2 -> text(tables);
      case 3 -> "CHAR_LENGTH(" + text(tables) + ")";
      case 4 -> column(tables, "d") + " + " + random.nextInt(5);
      default -> predicate(tables, 1);
    };
  }

  private String predicate(List<String> tables, int depth) {
    int pick = random.nextInt(depth <= 0 ? 6 : 9);
    String[] cmp = {"=", "<>", "<", "<=", ">", ">="};
    return switch (pick) {
      case 0 -> numeric(tables, 1) + " " + cmp[random.nextInt(cmp.length)] + " " + numeric(tables, 1);
      case 1 -> text(tables) + " " + cmp[random.nextInt(cmp.length)] + " '" + WORDS[random.nextInt(WORDS.length)] + "'";
      case 2 -> column(tables, random.nextBoolean() ? "s" : "n") + (random.nextBoolean() ? " IS NULL" : " IS NOT NULL");
      case 3 -> column(tables, "b");
      case 4 -> column(tables, "d") + " " + cmp[random.nextInt(cmp.length)] + " DATE '2020-01-" + (10 + random.nextInt(10)) + "'";
      case 5 -> column(tables, "i") + (random.nextBoolean() ? " BETWEEN " : " NOT BETWEEN ") + (random.nextInt(11) - 10) + " AND "
          + random.nextInt(11) + (random.nextBoolean() ? "" : " OR " + column(tables, "s") + " LIKE '" + "aBé".charAt(random.nextInt(3)) + "%'");
      case 6 -> "(" + predicate(tables, depth - 1) + (random.nextBoolean() ? " AND " : " OR ") + predicate(tables, depth - 1) + ")";
      case 7 -> "NOT (" + predicate(tables, depth - 1) + ")";
      default -> column(tables, "i") + (random.nextBoolean() ? " IN (" : " NOT IN (") + (random.nextInt(5) - 2) + ", "
          + (random.nextInt(5) - 2) + (random.nextBoolean() ? ", NULL" : "") + ")";
    };
  }
}
