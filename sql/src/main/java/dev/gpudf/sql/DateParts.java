package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Op;
import java.util.Locale;
import org.apache.calcite.avatica.util.TimeUnitRange;
import org.apache.calcite.sql.SqlFunction;
import org.apache.calcite.sql.SqlFunctionCategory;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.type.OperandTypes;
import org.apache.calcite.sql.type.ReturnTypes;
import org.apache.calcite.sql.type.SqlTypeFamily;

/**
 * Date parts and truncation as expressions of the kernels' date operations (day numbers, calendar
 * fields, days and months added), so they run wherever expressions run: EXTRACT of YEAR, QUARTER,
 * MONTH, DAY, DOW (Sunday 0), ISODOW (Monday 1), DOY and EPOCH (seconds, of a DATE), and
 * PostgreSQL's {@code date_trunc('day' | 'week' | 'month' | 'quarter' | 'year', date)}, which keeps
 * a DATE a DATE.
 */
final class DateParts {
  private DateParts() {}

  /** {@code date_trunc(text, date)}, as PostgreSQL and DuckDB write it (Calcite's libraries have only other forms). */
  static final SqlFunction DATE_TRUNC = new SqlFunction("DATE_TRUNC", SqlKind.OTHER_FUNCTION, ReturnTypes.ARG1_NULLABLE, null,
      OperandTypes.family(SqlTypeFamily.CHARACTER, SqlTypeFamily.DATE), SqlFunctionCategory.TIMEDATE);

  /** EXTRACT({@code unit} FROM {@code value}) of a {@code type} (DATE or TIMESTAMP) value. */
  static Expr extract(TimeUnitRange unit, Expr value, DataType type) {
    boolean date = type.id() != dev.gpudf.columnar.TypeId.TIMESTAMP;
    return switch (unit) {
      // of a TIMESTAMP: the time of day in its units, then whole hours, minutes and seconds (as DuckDB)
      case HOUR, MINUTE, SECOND -> {
        if (date) {
          throw new UserException("EXTRACT(" + unit + ") takes a TIMESTAMP, not a DATE");
        }
        long perSecond = switch (type.timeUnit()) {
          case SECOND -> 1L;
          case MILLISECOND -> 1_000L;
          case MICROSECOND -> 1_000_000L;
          case NANOSECOND -> 1_000_000_000L;
        };
        Expr timeOfDay = Expr.call(Op.SUB, Expr.cast(value, DataType.INT64),
            Expr.call(Op.MUL, days(value, false), Expr.lit(86_400L * perSecond)));
        yield switch (unit) {
          case HOUR -> Expr.call(Op.DIV, timeOfDay, Expr.lit(3_600L * perSecond));
          case MINUTE -> Expr.call(Op.MOD, Expr.call(Op.DIV, timeOfDay, Expr.lit(60L * perSecond)), Expr.lit(60L));
          default -> Expr.call(Op.MOD, Expr.call(Op.DIV, timeOfDay, Expr.lit(perSecond)), Expr.lit(60L));
        };
      }
      case YEAR -> Expr.call(Op.EXTRACT_YEAR, value);
      case MONTH -> Expr.call(Op.EXTRACT_MONTH, value);
      case DAY -> Expr.call(Op.EXTRACT_DAY, value);
      // the quarter from the month: (month + 2) / 3
      case QUARTER -> Expr.call(Op.DIV, Expr.call(Op.ADD, Expr.call(Op.EXTRACT_MONTH, value), Expr.lit(2)), Expr.lit(3));
      case DOW -> weekday(days(value, date), 4);
      case ISODOW -> Expr.call(Op.ADD, weekday(days(value, date), 3), Expr.lit(1L));
      case DOY -> Expr.call(Op.ADD, Expr.call(Op.SUB, days(value, date), days(yearStart(value), true)), Expr.lit(1L));
      case EPOCH -> {
        if (!date) {
          throw new NotSupportedException("EXTRACT(EPOCH) of a TIMESTAMP is not supported yet");
        }
        yield Expr.call(Op.MUL, days(value, true), Expr.lit(86_400L));
      }
      default -> throw new NotSupportedException("EXTRACT(" + unit + ") is not supported yet");
    };
  }

  /** {@code date_trunc(unit, date)}: the first day of the date's week (Monday), month, quarter or year, or the date. */
  static Expr truncate(String unit, Expr date) {
    String u = unit.strip().toLowerCase(Locale.ROOT);
    return switch (u) {
      case "day" -> date;
      case "week" -> Expr.call(Op.ADD_DAYS, date, Expr.call(Op.NEG, weekday(days(date, true), 3)));
      case "month" -> monthStart(date);
      case "quarter" -> Expr.call(Op.ADD_MONTHS, monthStart(date),
          Expr.call(Op.NEG, Expr.call(Op.MOD, Expr.call(Op.SUB, Expr.call(Op.EXTRACT_MONTH, date), Expr.lit(1)), Expr.lit(3))));
      case "year" -> yearStart(date);
      default -> throw new UserException("date_trunc of '" + unit + "': the parts are day, week, month, quarter and year");
    };
  }

  /** The day number (days since 1970-01-01) of a DATE, or of a TIMESTAMP's date. */
  private static Expr days(Expr value, boolean date) {
    return Expr.cast(date ? value : Expr.cast(value, DataType.DATE), DataType.INT64);
  }

  /** The weekday of day number {@code days}, 0 on the day {@code shift} days after a Thursday's: shift 4 counts from Sunday, 3 from Monday. */
  private static Expr weekday(Expr days, long shift) {
    return Expr.call(Op.MOD, Expr.call(Op.ADD, Expr.call(Op.MOD, days, Expr.lit(7L)), Expr.lit(7L + shift)), Expr.lit(7L));
  }

  private static Expr monthStart(Expr date) {
    return Expr.call(Op.ADD_DAYS, date, Expr.call(Op.SUB, Expr.lit(1), Expr.call(Op.EXTRACT_DAY, date)));
  }

  private static Expr yearStart(Expr date) {
    return Expr.call(Op.ADD_MONTHS, monthStart(date), Expr.call(Op.SUB, Expr.lit(1), Expr.call(Op.EXTRACT_MONTH, date)));
  }
}
