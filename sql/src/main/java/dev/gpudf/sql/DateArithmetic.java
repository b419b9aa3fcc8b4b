package dev.gpudf.sql;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.calcite.avatica.util.TimeUnit;
import org.apache.calcite.runtime.CalciteContextException;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlIntervalQualifier;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlLiteral;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.util.SqlShuttle;

/**
 * {@code date + n} and {@code date - n} with an integer {@code n} of days, as PostgreSQL and
 * DuckDB take them (TPC-DS q72 has {@code d1.d_date + 5}). Calcite's validator refuses them; the
 * position and operand types in its error name the expression, which becomes
 * {@code date + n * INTERVAL '1' DAY} and is validated again.
 */
final class DateArithmetic {
  private DateArithmetic() {}

  /** How many such expressions one statement may have fixed before its error stands. */
  static final int MAX_FIXES = 64;

  private static final Pattern REFUSED = Pattern.compile(
      "Cannot apply '([+-])' to arguments of type '<(\\w+)> [+-] <(\\w+)>'");

  /** One refused expression: where it is, and which operand counts days (0 or 1). */
  record Fix(int line, int column, int endLine, int endColumn, int days) {}

  /** The fix for the validator's error {@code e}, or null when it is not a date plus or minus an integer. */
  static Fix fixFor(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof CalciteContextException c) {
        Matcher m = REFUSED.matcher(c.getMessage());
        if (!m.find()) {
          return null;
        }
        boolean leftDate = isDate(m.group(2)) && isInteger(m.group(3));
        boolean rightDate = m.group(1).equals("+") && isInteger(m.group(2)) && isDate(m.group(3));
        if (!leftDate && !rightDate) {
          return null;
        }
        return new Fix(c.getPosLine(), c.getPosColumn(), c.getEndPosLine(), c.getEndPosColumn(), leftDate ? 1 : 0);
      }
    }
    return null;
  }

  private static boolean isDate(String type) {
    return type.equals("DATE") || type.startsWith("TIMESTAMP");
  }

  private static boolean isInteger(String type) {
    return switch (type) {
      case "TINYINT", "SMALLINT", "INTEGER", "BIGINT" -> true;
      default -> false;
    };
  }

  /** {@code parsed} with every fix applied (the days operand of each fixed expression times one day). */
  static SqlNode apply(SqlNode parsed, List<Fix> fixes) {
    if (fixes.isEmpty()) {
      return parsed;
    }
    return parsed.accept(new SqlShuttle() {
      @Override
      public SqlNode visit(SqlCall call) {
        SqlNode visited = super.visit(call);
        if (!(visited instanceof SqlCall c) || (c.getKind() != SqlKind.PLUS && c.getKind() != SqlKind.MINUS)) {
          return visited;
        }
        SqlParserPos p = call.getParserPosition();
        for (Fix f : fixes) {
          if (p.getLineNum() == f.line() && p.getColumnNum() == f.column() && p.getEndLineNum() == f.endLine()
              && p.getEndColumnNum() == f.endColumn()) {
            SqlNode days = c.operand(f.days());
            SqlNode oneDay = SqlLiteral.createInterval(1, "1", new SqlIntervalQualifier(TimeUnit.DAY, null, p), p);
            c.setOperand(f.days(), SqlStdOperatorTable.MULTIPLY.createCall(p, days, oneDay));
          }
        }
        return visited;
      }
    });
  }
}
