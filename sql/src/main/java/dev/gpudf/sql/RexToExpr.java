package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Evaluate;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Op;
import dev.gpudf.kernels.Scalar;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.calcite.avatica.util.TimeUnitRange;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.rex.RexCall;
import org.apache.calcite.rex.RexDynamicParam;
import org.apache.calcite.rex.RexInputRef;
import org.apache.calcite.rex.RexLiteral;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexShuttle;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.fun.SqlLikeOperator;
import org.apache.calcite.sql.fun.SqlTrimFunction;
import org.apache.calcite.sql.type.SqlTypeFamily;
import org.apache.calcite.sql.type.SqlTypeUtil;

/**
 * Translates Calcite row expressions into the kernels' {@link Expr}, and casts the result to
 * the type Calcite declared when the kernels' typing differs. Anything without a translation is
 * a {@link NotSupportedException} naming the operator.
 */
final class RexToExpr {
  private RexToExpr() {}

  /**
   * {@code rex} over input columns of types {@code input}, as an expression of Calcite's declared
   * type; each {@code ?} becomes its value from {@code parameters}.
   */
  static Expr translate(RexNode rex, List<DataType> input, RelOptCluster cluster, List<Object> parameters) {
    return translate(rex, input, cluster.getRexBuilder(), parameters);
  }

  /** {@link #translate(RexNode, List, RelOptCluster, List)} with the cluster's {@code rexBuilder}. */
  static Expr translate(RexNode rex, List<DataType> input, RexBuilder rexBuilder, List<Object> parameters) {
    RexNode bound = rex.accept(new RexShuttle() {
      @Override
      public RexNode visitDynamicParam(RexDynamicParam param) {
        return bind(rexBuilder, param, parameters);
      }
    });
    RexNode expanded = RexUtil.expandSearch(rexBuilder, null, bound);
    Expr e = new RexToExpr.Walker(input).walk(expanded);
    DataType declared = SqlTypes.fromCalcite(rex.getType());
    return Evaluate.typeOf(e, input).equals(declared) ? e : Expr.cast(e, declared);
  }

  /** The value of {@code lit} in gpudf's representation of its type (a DATE as its day number). */
  static Scalar scalar(RexLiteral lit) {
    DataType t = SqlTypes.fromCalcite(lit.getType());
    if (lit.isNull()) {
      return Scalar.nullOf(t);
    }
    Object v = switch (t.id()) {
      case BOOL -> lit.getValueAs(Boolean.class);
      case INT8, INT16, INT32, INT64 -> lit.getValueAs(Long.class);
      case FLOAT32, FLOAT64 -> lit.getValueAs(Double.class);
      case DECIMAL -> lit.getValueAs(BigDecimal.class);
      case DATE -> (long) lit.getValueAs(Integer.class);
      case TIMESTAMP -> Walker.timestamp(lit.getValueAs(Long.class), t);
      case STRING -> lit.getValueAs(String.class);
    };
    return new Scalar(t, v);
  }

  private static RexNode bind(RexBuilder rexBuilder, RexDynamicParam param, List<Object> parameters) {
    int i = param.getIndex();
    if (i >= parameters.size()) {
      throw new UserException("parameter " + (i + 1) + " is not set (" + parameters.size() + " given)");
    }
    Object value = parameters.get(i);
    if (value == null) {
      return rexBuilder.makeNullLiteral(param.getType());
    }
    try {
      return rexBuilder.makeLiteral(value, param.getType(), true);
    } catch (RuntimeException e) {
      throw new UserException("parameter " + (i + 1) + ": " + value + " (" + value.getClass().getSimpleName()
          + ") cannot be used as " + param.getType(), e);
    }
  }

  private record Walker(List<DataType> input) {
    Expr walk(RexNode rex) {
      if (rex instanceof RexInputRef ref) {
        return Expr.col(ref.getIndex());
      }
      if (rex instanceof RexLiteral lit) {
        return literal(lit);
      }
      if (!(rex instanceof RexCall call)) {
        throw new NotSupportedException("expression " + rex + " is not supported");
      }
      List<Expr> args = new ArrayList<>();
      List<RexNode> operands = call.getOperands();
      String name = call.getOperator().getName().toUpperCase(java.util.Locale.ROOT);
      if ((call.getKind() == SqlKind.PLUS || call.getKind() == SqlKind.MINUS)
          && operands.stream().anyMatch(o -> SqlTypeUtil.isInterval(o.getType()))) {
        return interval(call);
      }
      switch (call.getKind()) {
        case EXTRACT -> {
          return DateParts.extract(timeUnit(operands.get(0)), walk(operands.get(1)),
              SqlTypes.fromCalcite(operands.get(1).getType()));
        }
        case TRIM -> {
          SqlTrimFunction.Flag flag = ((RexLiteral) operands.get(0)).getValueAs(SqlTrimFunction.Flag.class);
          if (!(operands.get(1) instanceof RexLiteral chars) || !" ".equals(chars.getValueAs(String.class))) {
            throw new NotSupportedException("TRIM of characters other than spaces is not supported yet");
          }
          Op op = flag == SqlTrimFunction.Flag.BOTH ? Op.TRIM : flag == SqlTrimFunction.Flag.LEADING ? Op.LTRIM : Op.RTRIM;
          return Expr.call(op, walk(operands.get(2)));
        }
        case CAST -> {
          checkStringCast(operands.get(0).getType(), call.getType());
          return Expr.cast(walk(operands.get(0)), SqlTypes.fromCalcite(call.getType()));
        }
        default -> {
          for (RexNode o : operands) {
            args.add(walk(o));
          }
        }
      }
      Expr[] a = args.toArray(new Expr[0]);
      return switch (call.getKind()) {
        case PLUS -> Expr.call(Op.ADD, a);
        case MINUS -> Expr.call(Op.SUB, a);
        case TIMES -> Expr.call(Op.MUL, a);
        // a decimal quotient is computed at the scale Calcite declared, so it is rounded once
        case DIVIDE -> call.getType().getSqlTypeName() == org.apache.calcite.sql.type.SqlTypeName.DECIMAL
            ? Expr.call(Op.DIV, a[0], a[1], Expr.lit((long) call.getType().getScale()))
            // a DOUBLE quotient of decimals (GpudfTypeSystem) divides the operands as doubles
            : call.getType().getSqlTypeName() == org.apache.calcite.sql.type.SqlTypeName.DOUBLE
                ? Expr.call(Op.DIV, Expr.cast(a[0], dev.gpudf.columnar.DataType.FLOAT64),
                    Expr.cast(a[1], dev.gpudf.columnar.DataType.FLOAT64))
                : Expr.call(Op.DIV, a);
        case MOD -> Expr.call(Op.MOD, a);
        case MINUS_PREFIX -> Expr.call(Op.NEG, a);
        case PLUS_PREFIX -> a[0];
        case EQUALS -> Expr.call(Op.EQ, a);
        case NOT_EQUALS -> Expr.call(Op.NE, a);
        case LESS_THAN -> Expr.call(Op.LT, a);
        case LESS_THAN_OR_EQUAL -> Expr.call(Op.LE, a);
        case GREATER_THAN -> Expr.call(Op.GT, a);
        case GREATER_THAN_OR_EQUAL -> Expr.call(Op.GE, a);
        case IS_DISTINCT_FROM -> Expr.call(Op.IS_DISTINCT_FROM, a);
        case IS_NOT_DISTINCT_FROM -> Expr.call(Op.IS_NOT_DISTINCT_FROM, a);
        case AND -> Expr.call(Op.AND, a);
        case OR -> Expr.call(Op.OR, a);
        case NOT -> Expr.call(Op.NOT, a);
        case IS_NULL -> Expr.call(Op.IS_NULL, a);
        case IS_NOT_NULL -> Expr.call(Op.IS_NOT_NULL, a);
        case IS_TRUE -> Expr.call(Op.COALESCE, a[0], Expr.lit(false));
        case IS_NOT_TRUE -> Expr.call(Op.NOT, Expr.call(Op.COALESCE, a[0], Expr.lit(false)));
        case IS_FALSE -> Expr.call(Op.COALESCE, Expr.call(Op.NOT, a[0]), Expr.lit(false));
        case IS_NOT_FALSE -> Expr.call(Op.NOT, Expr.call(Op.COALESCE, Expr.call(Op.NOT, a[0]), Expr.lit(false)));
        case CASE -> Expr.caseWhen(List.of(a).subList(0, a.length - 1), a[a.length - 1]);
        case COALESCE -> Expr.call(Op.COALESCE, a);
        case LIKE -> {
          SqlLikeOperator op = (SqlLikeOperator) call.getOperator();
          Expr[] likeArgs = a.clone();
          if (!op.isCaseSensitive()) {
            // ILIKE: both sides lowered, code point by code point as LOWER does
            likeArgs[0] = Expr.call(Op.LOWER, a[0]);
            likeArgs[1] = a[1] instanceof Expr.Lit l && l.value() instanceof String pattern
                ? new Expr.Lit(l.type(), lower(pattern)) : Expr.call(Op.LOWER, a[1]);
          }
          Expr like = Expr.call(Op.LIKE, likeArgs);
          yield op.isNegated() ? Expr.call(Op.NOT, like) : like;
        }
        case FLOOR -> Expr.call(Op.FLOOR, one(a, name));
        case CEIL -> Expr.call(Op.CEIL, one(a, name));
        case POSITION -> Expr.call(Op.POSITION, two(a, name));
        default -> switch (name) {
          case "ABS" -> Expr.call(Op.ABS, a);
          case "SQRT" -> Expr.call(Op.SQRT, a);
          case "LN" -> Expr.call(Op.LN, a);
          case "EXP" -> Expr.call(Op.EXP, a);
          case "POWER" -> Expr.call(Op.POWER, a);
          case "CHAR_LENGTH", "CHARACTER_LENGTH" -> Expr.call(Op.CHAR_LENGTH, a);
          // LEFT(s, n): the first n characters (all but the last -n for negative n), as PostgreSQL
          case "LEFT" -> {
            long n = constant(operands.get(1), name);
            yield n >= 0 ? Expr.call(Op.SUBSTRING, a[0], Expr.lit(1), Expr.lit((int) n))
                : Expr.call(Op.SUBSTRING, a[0], Expr.lit(1), Expr.caseWhen(
                    List.of(Expr.call(Op.LT, Expr.call(Op.CHAR_LENGTH, a[0]), Expr.lit((int) -n)), Expr.lit(0)),
                    Expr.call(Op.ADD, Expr.call(Op.CHAR_LENGTH, a[0]), Expr.lit((int) n))));
          }
          // RIGHT(s, n): the last n characters (all but the first -n for negative n)
          case "RIGHT" -> {
            long n = constant(operands.get(1), name);
            yield n >= 0 ? Expr.call(Op.SUBSTRING, a[0],
                Expr.call(Op.ADD, Expr.call(Op.SUB, Expr.call(Op.CHAR_LENGTH, a[0]), Expr.lit((int) n)), Expr.lit(1)))
                : Expr.call(Op.SUBSTRING, a[0], Expr.lit((int) (1 - n)));
          }
          case "DATE_TRUNC" -> {
            if (!(operands.get(0) instanceof RexLiteral part)) {
              throw new NotSupportedException("date_trunc of a computed part is not supported yet: " + operands.get(0));
            }
            yield DateParts.truncate(part.getValueAs(String.class), a[1]);
          }
          case "STARTS_WITH" -> Expr.call(Op.EQ,
              Expr.call(Op.SUBSTRING, a[0], Expr.lit(1), Expr.call(Op.CHAR_LENGTH, a[1])), a[1]);
          case "SUBSTRING" -> Expr.call(Op.SUBSTRING, a);
          case "||" -> Expr.call(Op.CONCAT, two(a, name));
          // concat() skips NULLs (PostgreSQL and DuckDB), where || gives NULL
          case "CONCAT" -> java.util.stream.IntStream.range(0, a.length)
              .mapToObj(i -> operands.get(i).getType().isNullable()
                  ? Expr.call(Op.COALESCE, a[i], new Expr.Lit(dev.gpudf.columnar.DataType.STRING, "")) : a[i])
              .reduce((x, y) -> Expr.call(Op.CONCAT, x, y)).orElseThrow();
          case "UPPER" -> Expr.call(Op.UPPER, one(a, name));
          case "REPLACE" -> Expr.call(Op.REPLACE, a);
          // the fill is a space unless given (PostgreSQL, DuckDB)
          case "LPAD", "RPAD" -> Expr.call(name.equals("LPAD") ? Op.LPAD : Op.RPAD, a[0],
              Expr.cast(a[1], dev.gpudf.columnar.DataType.INT64),
              a.length > 2 ? a[2] : new Expr.Lit(dev.gpudf.columnar.DataType.STRING, " "));
          case "ROUND" -> Expr.call(Op.ROUND, a);
          case "SIGN" -> Expr.call(Op.SIGN, one(a, name));
          case "LOWER" -> Expr.call(Op.LOWER, one(a, name));
          default -> throw new NotSupportedException("SQL operator " + call.getOperator().getName() + " is not supported yet");
        };
      };
    }

    /** EXTRACT's field, or DATE_PART's field named by a string ('year', 'month', ...). */
    private static TimeUnitRange timeUnit(RexNode field) {
      if (!(field instanceof RexLiteral lit)) {
        throw new NotSupportedException("a date part must be a constant, not " + field);
      }
      if (lit.getTypeName() == org.apache.calcite.sql.type.SqlTypeName.SYMBOL) {
        return lit.getValueAs(TimeUnitRange.class);
      }
      String name = lit.getValueAs(String.class);
      try {
        return TimeUnitRange.valueOf(name.strip().toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new dev.gpudf.columnar.error.UserException("unknown date part '" + name + "'", e);
      }
    }

    /** {@code node}'s value as a whole number, for a function argument that must be a constant. */
    private static long constant(RexNode node, String function) {
      if (node instanceof RexLiteral lit && lit.getValueAs(Long.class) != null) {
        return lit.getValueAs(Long.class);
      }
      throw new NotSupportedException(function + " with a computed length is not supported yet: " + node);
    }

    /** {@code s} lowered code point by code point (Java's simple case mapping, as the LOWER kernels do). */
    private static String lower(String s) {
      StringBuilder b = new StringBuilder(s.length());
      s.codePoints().forEach(cp -> b.appendCodePoint(Character.toLowerCase(cp)));
      return b.toString();
    }

    /** DATE or TIMESTAMP plus or minus an interval literal: months, whole days, or milliseconds. */
    private Expr interval(RexCall call) {
      List<RexNode> operands = call.getOperands();
      int at = SqlTypeUtil.isInterval(operands.get(0).getType()) ? 0 : 1;
      if (!(operands.get(at) instanceof RexLiteral lit)) {
        throw new NotSupportedException("interval arithmetic with a computed interval is not supported yet: " + call);
      }
      if (SqlTypeUtil.isInterval(operands.get(1 - at).getType())) {
        throw new NotSupportedException("adding intervals to intervals is not supported yet: " + call);
      }
      if (lit.isNull()) {
        return Expr.nullOf(SqlTypes.fromCalcite(call.getType()));
      }
      long amount = lit.getValueAs(BigDecimal.class).longValueExact();
      if (call.getKind() == SqlKind.MINUS) {
        amount = Math.negateExact(amount);
      }
      Expr when = walk(operands.get(1 - at));
      boolean months = lit.getType().getSqlTypeName().getFamily() == SqlTypeFamily.INTERVAL_YEAR_MONTH;
      if (months) {
        return Expr.call(Op.ADD_MONTHS, when, Expr.lit(amount));
      }
      return amount % 86_400_000L == 0 ? Expr.call(Op.ADD_DAYS, when, Expr.lit(amount / 86_400_000L))
          : Expr.call(Op.ADD_MILLIS, when, Expr.lit(amount));
    }

    /**
     * Strings are unbounded VARCHAR on the device: a cast to CHAR(n) or to a VARCHAR(n) shorter
     * than what the value may hold would pad or cut it, which is refused rather than ignored.
     */
    private static void checkStringCast(org.apache.calcite.rel.type.RelDataType from,
        org.apache.calcite.rel.type.RelDataType to) {
      org.apache.calcite.sql.type.SqlTypeName t = to.getSqlTypeName();
      if (t != org.apache.calcite.sql.type.SqlTypeName.CHAR && t != org.apache.calcite.sql.type.SqlTypeName.VARCHAR) {
        return;
      }
      boolean bounded = to.getPrecision() != org.apache.calcite.rel.type.RelDataType.PRECISION_NOT_SPECIFIED;
      boolean fits = SqlTypeUtil.isCharacter(from)
          && from.getPrecision() != org.apache.calcite.rel.type.RelDataType.PRECISION_NOT_SPECIFIED
          && from.getPrecision() <= to.getPrecision()
          && (t == org.apache.calcite.sql.type.SqlTypeName.VARCHAR || from.getSqlTypeName() == t && from.getPrecision() == to.getPrecision());
      if (bounded && !fits) {
        throw new NotSupportedException("CAST to " + to.getFullTypeString().replace(" NOT NULL", "")
            + " (a bounded length) is not supported yet; cast to VARCHAR");
      }
    }

    private static Expr[] one(Expr[] a, String name) {
      if (a.length != 1) {
        throw new NotSupportedException(name + " with " + a.length + " arguments is not supported");
      }
      return a;
    }

    private static Expr[] two(Expr[] a, String name) {
      if (a.length != 2) {
        throw new NotSupportedException(name + " with a start position is not supported yet");
      }
      return a;
    }

    private Expr literal(RexLiteral lit) {
      Scalar s = scalar(lit);
      return s.isNull() ? Expr.nullOf(s.type()) : new Expr.Lit(s.type(), s.value());
    }

    private static long timestamp(long millis, DataType t) {
      return switch (t.timeUnit()) {
        case SECOND -> Math.floorDiv(millis, 1000L);
        case MILLISECOND -> millis;
        case MICROSECOND -> millis * 1_000L;
        case NANOSECOND -> millis * 1_000_000L;
      };
    }
  }

}
