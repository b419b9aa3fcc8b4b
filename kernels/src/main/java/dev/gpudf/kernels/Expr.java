package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A scalar expression over the columns of one table: what SQL projections and predicates and
 * DataFrame columns become. Evaluated row by row by {@link Evaluate} after
 * {@link ExprCompiler} has typed it and turned it into a {@link Program}.
 */
public sealed interface Expr permits Expr.Col, Expr.Lit, Expr.Call, Expr.Cast {
  /** Column {@code index} of the input table. */
  record Col(int index) implements Expr {}

  /**
   * A constant: {@link Long} for integers, DATE days and TIMESTAMP units, {@link Double},
   * {@link BigDecimal}, {@link Boolean}; null for a typed NULL.
   */
  record Lit(DataType type, Object value) implements Expr {
    public Lit {
      Objects.requireNonNull(type, "type");
    }
  }

  /** An operator applied to arguments. */
  record Call(Op op, List<Expr> args) implements Expr {
    public Call {
      args = List.copyOf(args);
    }
  }

  /**
   * CAST(arg AS type): between integer, float and decimal types (integers and decimals round
   * half away from zero, floats to integers half to even; out of range is an error), integer
   * and BOOL, DATE and TIMESTAMP.
   */
  record Cast(Expr arg, DataType type) implements Expr {
    public Cast {
      Objects.requireNonNull(arg, "arg");
      Objects.requireNonNull(type, "type");
    }
  }

  static Expr cast(Expr arg, DataType type) {
    return new Cast(arg, type);
  }

  static Expr col(int index) {
    return new Col(index);
  }

  static Expr lit(long v) {
    return new Lit(DataType.INT64, v);
  }

  static Expr lit(int v) {
    return new Lit(DataType.INT32, (long) v);
  }

  static Expr lit(double v) {
    return new Lit(DataType.FLOAT64, v);
  }

  static Expr lit(boolean v) {
    return new Lit(DataType.BOOL, v);
  }

  /** A decimal constant of the value's own precision and scale. */
  static Expr lit(BigDecimal v) {
    return new Lit(DataType.decimal(Math.max(v.precision(), v.scale()), v.scale()), v);
  }

  static Expr nullOf(DataType type) {
    return new Lit(type, null);
  }

  static Expr call(Op op, Expr... args) {
    return new Call(op, List.of(args));
  }

  /** Whether {@code test} holds for {@code e} or for some part of it. */
  static boolean anyPart(Expr e, java.util.function.Predicate<Expr> test) {
    if (test.test(e)) {
      return true;
    }
    if (e instanceof Call c) {
      return c.args().stream().anyMatch(a -> anyPart(a, test));
    }
    return e instanceof Cast c && anyPart(c.arg(), test);
  }

  /**
   * {@code e} with each outermost part for which {@code replacement} gives an expression replaced
   * by it (null: keep the part and look inside it), in argument order.
   */
  static Expr rewrite(Expr e, java.util.function.Function<Expr, Expr> replacement) {
    Expr r = replacement.apply(e);
    if (r != null) {
      return r;
    }
    if (e instanceof Call c) {
      List<Expr> args = new ArrayList<>();
      for (Expr a : c.args()) {
        args.add(rewrite(a, replacement));
      }
      return new Call(c.op(), args);
    }
    return e instanceof Cast c ? new Cast(rewrite(c.arg(), replacement), c.type()) : e;
  }

  /** CASE WHEN w1 THEN t1 ... ELSE otherwise END; {@code whenThen} alternates conditions and values. */
  static Expr caseWhen(List<Expr> whenThen, Expr otherwise) {
    List<Expr> args = new ArrayList<>(whenThen);
    args.add(otherwise);
    return new Call(Op.CASE, args);
  }
}
