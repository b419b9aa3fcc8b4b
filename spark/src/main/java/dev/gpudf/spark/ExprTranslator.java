package dev.gpudf.spark;

import dev.gpudf.columnar.DataType;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Op;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Contains;
import org.apache.spark.sql.catalyst.expressions.EndsWith;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.Like;
import org.apache.spark.sql.catalyst.expressions.StartsWith;
import org.apache.spark.sql.catalyst.expressions.Year;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.Remainder;
import org.apache.spark.sql.catalyst.expressions.Substring;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;

/**
 * Spark Catalyst expressions as gpudf {@link Expr}s, where gpudf computes exactly what Spark does;
 * anything else is {@link Refused}, with the reason, and its operator stays on Spark. Columns are
 * the child operator's output attributes, by position.
 *
 * <p>Where the two differ, Spark's semantics decide: integer and decimal arithmetic and narrowing
 * casts are taken only in ANSI mode (Spark's default since 4.0), where an overflow is an error in
 * both engines, never in Spark's legacy mode, where Spark wraps around (integers) or gives NULL
 * (decimals); decimal arithmetic only where Spark's result has gpudf's exact scale (past 38 digits
 * Spark rounds to fewer places); casts from floating point to integers (Spark truncates, gpudf
 * rounds) are not taken.
 */
final class ExprTranslator {
  /** Why an expression or operator cannot run on gpudf: its message says what and why. */
  static final class Refused extends RuntimeException {
    Refused(String why) {
      super(why, null, false, false);
    }
  }

  private ExprTranslator() {}

  /** gpudf's type for Spark's {@code t}, or a {@link Refused}. */
  static DataType type(org.apache.spark.sql.types.DataType t) {
    if (t instanceof IntegerType) {
      return DataType.INT32;
    }
    if (t instanceof LongType) {
      return DataType.INT64;
    }
    if (t instanceof DoubleType) {
      return DataType.FLOAT64;
    }
    if (t instanceof BooleanType) {
      return DataType.BOOL;
    }
    if (t instanceof DateType) {
      return DataType.DATE;
    }
    if (t instanceof StringType s && s.supportsBinaryEquality()) {
      return DataType.STRING;
    }
    if (t instanceof DecimalType d) {
      return DataType.decimal(d.precision(), d.scale());
    }
    throw new Refused("type " + t.simpleString() + " is not supported");
  }

  /** {@code e} over columns {@code input} as a gpudf expression, or a {@link Refused}. */
  static Expr translate(Expression e, List<Attribute> input) {
    if (e instanceof Alias a) {
      return translate(a.child(), input);
    }
    if (e instanceof AttributeReference a) {
      for (int i = 0; i < input.size(); i++) {
        if (input.get(i).exprId().equals(a.exprId())) {
          type(a.dataType());
          return new Expr.Col(i);
        }
      }
      throw new Refused("column " + a.name() + " is not in the operator's input");
    }
    if (e instanceof Literal l) {
      return literal(l);
    }
    if (e instanceof And a) {
      return call(Op.AND, a.left(), a.right(), input);
    }
    if (e instanceof Or o) {
      return call(Op.OR, o.left(), o.right(), input);
    }
    if (e instanceof Not n) {
      return new Expr.Call(Op.NOT, List.of(translate(n.child(), input)));
    }
    if (e instanceof IsNull n) {
      return new Expr.Call(Op.IS_NULL, List.of(translate(n.child(), input)));
    }
    if (e instanceof IsNotNull n) {
      return new Expr.Call(Op.IS_NOT_NULL, List.of(translate(n.child(), input)));
    }
    if (e instanceof EqualTo c) {
      return call(Op.EQ, c.left(), c.right(), input);
    }
    if (e instanceof LessThan c) {
      return call(Op.LT, c.left(), c.right(), input);
    }
    if (e instanceof LessThanOrEqual c) {
      return call(Op.LE, c.left(), c.right(), input);
    }
    if (e instanceof GreaterThan c) {
      return call(Op.GT, c.left(), c.right(), input);
    }
    if (e instanceof GreaterThanOrEqual c) {
      return call(Op.GE, c.left(), c.right(), input);
    }
    if (e instanceof Add a) {
      return arithmetic(Op.ADD, a, a.left(), a.right(), a.evalMode().toString(), input);
    }
    if (e instanceof Subtract s) {
      return arithmetic(Op.SUB, s, s.left(), s.right(), s.evalMode().toString(), input);
    }
    if (e instanceof Multiply m) {
      return arithmetic(Op.MUL, m, m.left(), m.right(), m.evalMode().toString(), input);
    }
    if (e instanceof Remainder r) {
      // integers in ANSI mode only: outside it Spark gives NULL for a zero divisor (gpudf fails, as
      // ANSI mode does), and a float's remainder by zero is Spark's error but gpudf's NaN
      DataType t = type(r.dataType());
      if (!t.equals(DataType.INT32) && !t.equals(DataType.INT64)) {
        throw new Refused("remainder of " + r.dataType().simpleString() + " is not translated to gpudf");
      }
      return arithmetic(Op.MOD, r, r.left(), r.right(), r.evalMode().toString(), input);
    }
    if (e instanceof Cast c) {
      return cast(c, input);
    }
    if (e instanceof Substring sub) {
      return substring(sub, input);
    }
    if (e instanceof CaseWhen w) {
      return caseWhen(w, input);
    }
    if (e instanceof In in) {
      List<Expr> args = new java.util.ArrayList<>();
      args.add(translate(in.value(), input));
      for (Expression item : GpudfUnaryExec.list(in.list())) {
        args.add(translate(item, input));
      }
      return new Expr.Call(Op.IN, args);
    }
    if (e instanceof InSet in) {
      // the optimizer's form of a long IN list: its values, typed as the tested column
      List<Expr> args = new java.util.ArrayList<>();
      args.add(translate(in.child(), input));
      for (Object v : scala.jdk.javaapi.CollectionConverters.asJava(in.hset())) {
        args.add(literal(new Literal(v, in.child().dataType())));
      }
      return new Expr.Call(Op.IN, args);
    }
    if (e instanceof Like l && l.right() instanceof Literal) {
      if (l.escapeChar() > 0x7F) {
        // gpudf's LIKE takes an ASCII escape character only: refused here, not failed in a task
        throw new Refused("LIKE with the escape character '" + l.escapeChar() + "'");
      }
      return new Expr.Call(Op.LIKE, List.of(translate(l.left(), input), translate(l.right(), input),
          new Expr.Lit(DataType.STRING, String.valueOf(l.escapeChar()))));
    }
    if (e instanceof StartsWith w && w.right() instanceof Literal p) {
      return matching(w.left(), escaped(p) + "%", input);
    }
    if (e instanceof EndsWith w && w.right() instanceof Literal p) {
      return matching(w.left(), "%" + escaped(p), input);
    }
    if (e instanceof Contains w && w.right() instanceof Literal p) {
      return matching(w.left(), "%" + escaped(p) + "%", input);
    }
    if (e instanceof Year y) {
      // gpudf's EXTRACT is a BIGINT, Spark's year() an INT
      return new Expr.Cast(new Expr.Call(Op.EXTRACT_YEAR, List.of(translate(y.child(), input))), DataType.INT32);
    }
    throw new Refused(e.prettyName() + " is not translated to gpudf");
  }

  /** gpudf's types of columns {@code input} (one gpudf does not take as STRING: an expression that reads it is refused anyway). */
  private static List<DataType> types(List<Attribute> input) {
    List<DataType> out = new java.util.ArrayList<>();
    for (Attribute a : input) {
      try {
        out.add(type(a.dataType()));
      } catch (Refused r) {
        out.add(DataType.STRING);
      }
    }
    return out;
  }

  /** {@code value} LIKE {@code pattern}, where a backslash escapes. */
  private static Expr matching(Expression value, String pattern, List<Attribute> input) {
    return new Expr.Call(Op.LIKE, List.of(translate(value, input), new Expr.Lit(DataType.STRING, pattern),
        new Expr.Lit(DataType.STRING, "\\")));
  }

  /** String literal {@code p}, matched as it is: LIKE's wildcards and the escape character escaped. */
  private static String escaped(Literal p) {
    if (p.value() == null) {
      throw new Refused("a string test against NULL");
    }
    return p.value().toString().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
  }

  private static Expr call(Op op, Expression left, Expression right, List<Attribute> input) {
    return new Expr.Call(op, List.of(translate(left, input), translate(right, input)));
  }

  /** Floating-point arithmetic always (IEEE in both); integers in ANSI mode only; decimals never. */
  private static Expr arithmetic(Op op, Expression e, Expression left, Expression right, String evalMode,
      List<Attribute> input) {
    DataType result = type(e.dataType());
    boolean decimal = result.id() == dev.gpudf.columnar.TypeId.DECIMAL;
    boolean integral = result.equals(DataType.INT32) || result.equals(DataType.INT64);
    if ((integral || decimal) && !evalMode.equals("ANSI")) {
      throw new Refused(e.prettyName() + " of " + (decimal ? "decimals" : "integers") + " outside ANSI mode: Spark "
          + (decimal ? "gives NULL" : "wraps around") + " on overflow, gpudf fails");
    }
    Expr exact = call(op, left, right, input);
    if (decimal) {
      DataType computed = dev.gpudf.kernels.Evaluate.typeOf(exact, types(input));
      if (computed.id() != dev.gpudf.columnar.TypeId.DECIMAL || computed.scale() != result.scale()) {
        throw new Refused(e.prettyName() + " of decimals to " + e.dataType().simpleString() + ": gpudf's exact result is "
            + computed + ", and Spark rounds to its scale");
      }
    }
    // gpudf may compute in a wider type; the cast back checks the range, as Spark's ANSI mode does
    return new Expr.Cast(exact, result);
  }

  /**
   * CASE WHEN ... THEN ... [ELSE ...] END: a NULL condition is not taken, as in Spark, and only the
   * branch taken counts for a row (an error in another, ANSI mode's overflow say, does not). Spark
   * has cast the branches to the result type already; where gpudf would still type the CASE
   * otherwise (decimals of other precisions), it stays Spark's.
   */
  private static Expr caseWhen(CaseWhen w, List<Attribute> input) {
    List<Expr> args = new java.util.ArrayList<>();
    for (scala.Tuple2<Expression, Expression> branch : scala.jdk.javaapi.CollectionConverters.asJava(w.branches())) {
      args.add(translate(branch._1(), input));
      args.add(translate(branch._2(), input));
    }
    DataType result = type(w.dataType());
    args.add(w.elseValue().isDefined() ? translate(w.elseValue().get(), input) : new Expr.Lit(result, null));
    Expr out = new Expr.Call(Op.CASE, args);
    DataType computed = dev.gpudf.kernels.Evaluate.typeOf(out, types(input));
    if (!computed.equals(result)) {
      throw new Refused("casewhen of " + w.dataType().simpleString() + " would be " + computed + " on gpudf");
    }
    return out;
  }

  /**
   * substring(s, pos, len) with constant positions where Spark's rule is SQL's: a start of 1 or
   * more and a length of 0 or more, in characters (Spark takes a start of 0 as 1, counts a
   * negative one from the end and gives '' for a negative length; those stay Spark's).
   */
  private static Expr substring(Substring sub, List<Attribute> input) {
    if (!(sub.pos() instanceof Literal pos && pos.value() instanceof Integer p && p >= 1)
        || !(sub.len() instanceof Literal len && len.value() instanceof Integer n && n >= 0)) {
      throw new Refused("substring with a start below 1, a negative length or positions not constant");
    }
    // Spark's substr(s, pos) is a length of Integer.MAX_VALUE: SQL's form without a length
    return new Expr.Call(Op.SUBSTRING, n == Integer.MAX_VALUE ? List.of(translate(sub.str(), input), literal(pos))
        : List.of(translate(sub.str(), input), literal(pos), literal(len)));
  }

  private static Expr cast(Cast c, List<Attribute> input) {
    DataType from = type(c.child().dataType());
    DataType to = type(c.dataType());
    boolean fromInt = from.equals(DataType.INT32) || from.equals(DataType.INT64);
    boolean toInt = to.equals(DataType.INT32) || to.equals(DataType.INT64);
    boolean widening = (from.equals(DataType.INT32) && (to.equals(DataType.INT64) || to.equals(DataType.FLOAT64)))
        || (from.equals(DataType.INT64) && to.equals(DataType.FLOAT64)) || from.equals(to);
    boolean narrowing = fromInt && toInt && c.evalMode().toString().equals("ANSI");
    if (!widening && !narrowing && !exactDecimal(from, to)) {
      throw new Refused("cast from " + c.child().dataType().simpleString() + " to " + c.dataType().simpleString()
          + " is not translated to gpudf");
    }
    return new Expr.Cast(translate(c.child(), input), to);
  }

  /**
   * Whether a cast from {@code from} to {@code to} is a decimal of at most 18 digits that holds
   * every value of {@code from} exactly (as many digits before the point or more, as many after it
   * or more): it never fails and never rounds, in Spark and in gpudf alike. A wider decimal stays
   * Spark's: gpudf computes decimals in 64 bits and would fail where Spark's 128 bits go on.
   */
  private static boolean exactDecimal(DataType from, DataType to) {
    if (to.id() != dev.gpudf.columnar.TypeId.DECIMAL || to.precision() > 18) {
      return false;
    }
    int whole = to.precision() - to.scale();
    if (from.equals(DataType.INT32)) {
      return whole >= 10;
    }
    return from.id() == dev.gpudf.columnar.TypeId.DECIMAL && to.scale() >= from.scale()
        && whole >= from.precision() - from.scale();
  }

  private static Expr literal(Literal l) {
    DataType t = type(l.dataType());
    Object v = l.value();
    if (v == null) {
      return new Expr.Lit(t, null);
    }
    Object value;
    if (v instanceof Integer i) {
      // INT32 and DATE (days) alike
      value = (long) i;
    } else if (v instanceof org.apache.spark.unsafe.types.UTF8String s) {
      value = s.toString();
    } else if (v instanceof org.apache.spark.sql.types.Decimal d) {
      value = d.toJavaBigDecimal();
    } else {
      value = v;
    }
    return new Expr.Lit(t, value);
  }
}
