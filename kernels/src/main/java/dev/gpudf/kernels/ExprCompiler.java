package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.math.BigDecimal;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Types an {@link Expr} against the input column types and compiles it to a {@link Program}.
 * Typing follows Calcite's defaults: integers widen to the wider operand, a float operand makes
 * the result a float, decimal + and - take the larger scale and one more digit, decimal * adds
 * precisions and scales (precision capped at 38). Integers are held as int64 and floats as
 * doubles in registers; decimals as unscaled int64. An operation on a DECIMAL of more than 18
 * digits declares itself 128 bits wide: where its value passes 64 bits the row ends with
 * {@link Opcode#ERR_WIDE}, and {@link Evaluate} runs the program again in 128 bits on the host
 * ({@link CpuEval#runWide}); a constant past 18 digits is built in 18-digit steps the same way.
 * Strings are compared, matched (LIKE), measured, cut (SUBSTRING, TRIM) and searched (POSITION);
 * functions that make new bytes (||, UPPER, LOWER, REPLACE, LPAD, RPAD) are StringBuild's.
 */
public final class ExprCompiler {
  private final List<DataType> input;
  private final List<Integer> code = new ArrayList<>();
  private final List<Long> constants = new ArrayList<>();
  private final List<Integer> columns = new ArrayList<>();
  private final java.io.ByteArrayOutputStream strings = new java.io.ByteArrayOutputStream();
  private final Deque<Integer> free = new ArrayDeque<>();
  private int registers;

  private record Value(int reg, DataType type) {}

  private ExprCompiler(List<DataType> input) {
    this.input = input;
  }

  /** Compiles {@code e} over columns of types {@code input}. */
  public static Program compile(Expr e, List<DataType> input) {
    ExprCompiler c = new ExprCompiler(input);
    Value v = c.gen(e);
    int[] code = c.code.stream().mapToInt(Integer::intValue).toArray();
    long[] consts = c.constants.stream().mapToLong(Long::longValue).toArray();
    return new Program(code, consts, c.strings.toByteArray(), List.copyOf(c.columns), c.registers, v.type, v.reg);
  }

  private Value gen(Expr e) {
    if (e instanceof Expr.Col col) {
      return load(col.index());
    }
    if (e instanceof Expr.Lit lit) {
      return literal(lit);
    }
    if (e instanceof Expr.Cast cast) {
      return cast(gen(cast.arg()), cast.type());
    }
    Expr.Call call = (Expr.Call) e;
    List<Expr> args = call.args();
    return switch (call.op()) {
      case DIV -> args.size() == 3 ? decimalDivide(call) : arithmetic(Op.DIV, gen(arg(call, 0, 2)), gen(args.get(1)));
      case ADD, SUB -> {
        Value[] v = aligned(call);
        yield arithmetic(call.op(), v[0], v[1]);
      }
      case MUL, MOD -> arithmetic(call.op(), gen(arg(call, 0, 2)), gen(args.get(1)));
      case NEG -> negate(gen(arg(call, 0, 1)));
      case EQ, NE, LT, LE, GT, GE -> {
        Value[] v = aligned(call);
        yield compare(call.op(), v[0], v[1]);
      }
      case AND, OR -> logic(call.op(), args);
      case NOT -> not(bool(gen(arg(call, 0, 1)), "NOT"));
      case IS_NULL, IS_NOT_NULL -> {
        Value v = gen(arg(call, 0, 1));
        yield emit(call.op() == Op.IS_NULL ? Opcode.IS_NULL : Opcode.IS_NOT_NULL, DataType.BOOL, v.reg, 0, 0, v);
      }
      case IS_DISTINCT_FROM, IS_NOT_DISTINCT_FROM -> distinct(call.op(), gen(arg(call, 0, 2)), gen(args.get(1)));
      case CASE -> caseWhen(args);
      case COALESCE -> coalesce(args);
      case IN -> in(args);
      case EXTRACT_YEAR, EXTRACT_MONTH, EXTRACT_DAY -> extract(call.op(), gen(arg(call, 0, 1)));
      case ADD_MONTHS, ADD_DAYS, ADD_MILLIS -> calendar(call.op(), gen(arg(call, 0, 2)), gen(args.get(1)));
      case ABS -> abs(gen(arg(call, 0, 1)));
      case SQRT, LN, EXP -> math(call.op(), gen(arg(call, 0, 1)), null);
      case POWER -> math(Op.POWER, gen(arg(call, 0, 2)), gen(args.get(1)));
      case FLOOR, CEIL -> floorCeil(call.op(), gen(arg(call, 0, 1)));
      case ROUND -> round(call);
      case SIGN -> {
        // CASE WHEN x > 0 THEN 1 WHEN x < 0 THEN -1 ELSE x END, in x's type; NaN orders above
        // +inf here, so a float's positive case stops at +inf and NaN falls through to ELSE
        Expr x = arg(call, 0, 1);
        DataType t = typeOf(x);
        requireNumeric(new Value(-1, t), Op.SIGN);
        Expr positive = isFloat(t) ? call(Op.BETWEEN, x, Expr.lit(Double.MIN_VALUE), Expr.lit(Double.POSITIVE_INFINITY))
            : call(Op.GT, x, zero(t));
        yield gen(Expr.caseWhen(List.of(positive, Expr.cast(Expr.lit(1), t),
            call(Op.LT, x, zero(t)), Expr.cast(Expr.lit(-1), t)), x));
      }
      case LIKE -> like(call);
      case SUBSTRING -> substring(call);
      case TRIM, LTRIM, RTRIM -> {
        Value v = gen(arg(call, 0, 1));
        requireString(v, call.op().name());
        yield emit(Opcode.TRIM, DataType.STRING, v.reg, 0, call.op() == Op.TRIM ? 0 : call.op() == Op.LTRIM ? 1 : 2, v);
      }
      case POSITION -> {
        Value needle = gen(arg(call, 0, 2));
        Value hay = gen(args.get(1));
        requireString(needle, "POSITION");
        requireString(hay, "POSITION");
        yield emit(Opcode.POSITION, DataType.INT32, needle.reg, hay.reg, 0, needle, hay);
      }
      case CHAR_LENGTH -> {
        Value v = gen(arg(call, 0, 1));
        requireString(v, "CHAR_LENGTH");
        yield emit(Opcode.CHAR_LENGTH, DataType.INT32, v.reg, 0, 0, v);
      }
      case BETWEEN -> {
        arg(call, 0, 3);
        yield gen(Expr.call(Op.AND, Expr.call(Op.GE, args.get(0), args.get(1)), Expr.call(Op.LE, args.get(0), args.get(2))));
      }
      // Evaluate computes these ahead of the program (StringBuild): reaching here is a bug
      case CONCAT, UPPER, LOWER, REPLACE, LPAD, RPAD -> throw new dev.gpudf.columnar.error.InternalException(call.op()
          + " reached the expression compiler instead of StringBuild");
    };
  }

  /**
   * The two operands of {@code call}, a literal one generated after the other and, when it is an
   * integer or decimal beside a decimal of larger scale, as a decimal literal at that scale: the
   * operands are then aligned here once instead of by a SCALE_UP per row. The literal's precision
   * grows as that SCALE_UP's would, so the result type is the same.
   */
  private Value[] aligned(Expr.Call call) {
    Expr x = arg(call, 0, 2);
    Expr y = call.args().get(1);
    if (x instanceof Expr.Lit && !(y instanceof Expr.Lit)) {
      Value vy = gen(y);
      return new Value[] {gen(prescaled((Expr.Lit) x, vy.type)), vy};
    }
    Value vx = gen(x);
    return new Value[] {vx, gen(y instanceof Expr.Lit lit ? prescaled(lit, vx.type) : y)};
  }

  private static Expr prescaled(Expr.Lit lit, DataType other) {
    if (lit.value() == null || !(isInt(lit.type()) || isDecimal(lit.type())) || !isDecimal(other)) {
      return lit;
    }
    DataType d = asDecimal(lit.type());
    if (other.scale() <= d.scale()) {
      return lit;
    }
    BigDecimal v = lit.value() instanceof BigDecimal b ? b : BigDecimal.valueOf(((Number) lit.value()).longValue());
    BigDecimal scaled = v.setScale(other.scale());
    if (scaled.unscaledValue().bitLength() > 63) {
      return lit;
    }
    return new Expr.Lit(DataType.decimal(Math.min(38, d.precision() + other.scale() - d.scale()), other.scale()), scaled);
  }

  private static Expr arg(Expr.Call call, int i, int arity) {
    if (call.args().size() != arity) {
      throw new UserException(call.op() + " takes " + arity + " argument(s), not " + call.args().size());
    }
    return call.args().get(i);
  }

  // ---- leaves ----

  private Value load(int index) {
    if (index < 0 || index >= input.size()) {
      throw new UserException("column " + index + " does not exist; the input has " + input.size());
    }
    DataType t = input.get(index);
    Opcode.LoadKind kind = switch (t.id()) {
      case BOOL -> Opcode.LoadKind.BITS;
      case INT8 -> Opcode.LoadKind.I8;
      case INT16 -> Opcode.LoadKind.I16;
      case INT32, DATE -> Opcode.LoadKind.I32;
      case INT64, TIMESTAMP -> Opcode.LoadKind.I64;
      case FLOAT32 -> Opcode.LoadKind.F32;
      case FLOAT64 -> Opcode.LoadKind.F64;
      // a DECIMAL beyond 18 digits is read as int64 when its value fits, which is checked per row
      case DECIMAL -> t.isDecimal64() ? Opcode.LoadKind.I64 : Opcode.LoadKind.I128;
      case STRING -> null;
    };
    int slot = columns.indexOf(index);
    if (slot < 0) {
      slot = columns.size();
      columns.add(index);
    }
    return kind == null ? emit(Opcode.LOAD_STR_COL, t, slot, 0, 0) : emit(Opcode.LOAD_COL, t, slot, 0, kind.ordinal());
  }

  private Value literal(Expr.Lit lit) {
    DataType t = lit.type();
    Object v = lit.value();
    if (v == null) {
      return emit(Opcode.LOAD_CONST, t, constant(0), 1, 0);
    }
    if (t.id() == TypeId.STRING) {
      byte[] bytes = ((String) v).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int offset = strings.size();
      strings.writeBytes(bytes);
      return emit(Opcode.LOAD_STR_CONST, t, offset, bytes.length, 0);
    }
    if (t.id() == TypeId.DECIMAL) {
      java.math.BigInteger unscaled = ((BigDecimal) v).setScale(t.scale()).unscaledValue();
      return unscaled.bitLength() > 63 ? wideLiteral(unscaled, t)
          : emit(Opcode.LOAD_CONST, t, constant(unscaled.longValueExact()), 0, 0);
    }
    long bits = switch (t.id()) {
      case BOOL -> ((Boolean) v) ? 1 : 0;
      case FLOAT32, FLOAT64 -> Double.doubleToRawLongBits(((Number) v).doubleValue());
      default -> ((Number) v).longValue();
    };
    return emit(Opcode.LOAD_CONST, t, constant(bits), 0, 0);
  }

  /**
   * A decimal constant past 64 bits, built from its 18-digit chunks (most significant first) as
   * chunk * 10^18 + next ..., each step declared 128 bits wide: the 64-bit evaluators end such a
   * row with {@link Opcode#ERR_WIDE} and {@link Evaluate} computes it in 128.
   */
  private Value wideLiteral(java.math.BigInteger unscaled, DataType t) {
    if (unscaled.abs().compareTo(java.math.BigInteger.TEN.pow(DataType.MAX_DECIMAL_PRECISION)) >= 0) {
      throw new UserException("the decimal constant " + unscaled + " (unscaled) has more than 38 digits");
    }
    java.math.BigInteger chunk = java.math.BigInteger.TEN.pow(MAX_POWER);
    List<Long> chunks = new ArrayList<>();
    for (java.math.BigInteger rest = unscaled; rest.signum() != 0; ) {
      java.math.BigInteger[] qr = rest.divideAndRemainder(chunk);
      chunks.add(0, qr[1].longValueExact());
      rest = qr[0];
    }
    DataType wide = DataType.decimal(DataType.MAX_DECIMAL_PRECISION, t.scale());
    Value acc = emit(Opcode.LOAD_CONST, wide, constant(chunks.get(0)), 0, 0);
    for (int i = 1; i < chunks.size(); i++) {
      Value shifted = emit(Opcode.SCALE_UP, wide, acc.reg, constant(pow10(MAX_POWER)), bits(wide), acc);
      Value part = emit(Opcode.LOAD_CONST, wide, constant(chunks.get(i)), 0, 0);
      acc = emit(Opcode.I_ADD, wide, shifted.reg, part.reg, bits(wide), shifted, part);
    }
    return new Value(acc.reg, t);
  }

  // ---- arithmetic ----

  private Value arithmetic(Op op, Value a, Value b) {
    if ((op == Op.ADD || op == Op.SUB) && a.type.id() == TypeId.DATE && isInt(b.type)) {
      // DATE +/- days stays a DATE; the day number must stay within INT32
      return emit(op == Op.ADD ? Opcode.I_ADD : Opcode.I_SUB, DataType.DATE, a.reg, b.reg, 32, a, b);
    }
    if (op == Op.ADD && isInt(a.type) && b.type.id() == TypeId.DATE) {
      return emit(Opcode.I_ADD, DataType.DATE, a.reg, b.reg, 32, a, b);
    }
    requireNumeric(a, op);
    requireNumeric(b, op);
    if (isFloat(a.type) || isFloat(b.type)) {
      DataType t = a.type.equals(DataType.FLOAT32) && b.type.equals(DataType.FLOAT32)
          || (a.type.equals(DataType.FLOAT32) && isSmallInt(b.type)) || (b.type.equals(DataType.FLOAT32) && isSmallInt(a.type))
          ? DataType.FLOAT32 : DataType.FLOAT64;
      Value x = toDouble(a);
      Value y = toDouble(b);
      Opcode code = switch (op) {
        case ADD -> Opcode.F_ADD;
        case SUB -> Opcode.F_SUB;
        case MUL -> Opcode.F_MUL;
        case DIV -> Opcode.F_DIV;
        default -> Opcode.F_MOD;
      };
      return emit(code, t, x.reg, y.reg, t.equals(DataType.FLOAT32) ? 1 : 0, x, y);
    }
    if (isDecimal(a.type) || isDecimal(b.type)) {
      DataType da = asDecimal(a.type);
      DataType db = asDecimal(b.type);
      switch (op) {
        case ADD, SUB -> {
          int s = Math.max(da.scale(), db.scale());
          int p = Math.min(DataType.MAX_DECIMAL_PRECISION, Math.max(da.precision() - da.scale(), db.precision() - db.scale()) + s + 1);
          Value x = rescale(a, da.scale(), s);
          Value y = rescale(b, db.scale(), s);
          DataType t = DataType.decimal(p, s);
          return emit(op == Op.ADD ? Opcode.I_ADD : Opcode.I_SUB, t, x.reg, y.reg, bits(t), x, y);
        }
        case MUL -> {
          int s = da.scale() + db.scale();
          if (s > DataType.MAX_DECIMAL_PRECISION) {
            throw new NotSupportedException("decimal product scale " + s + " exceeds 38");
          }
          int p = Math.min(DataType.MAX_DECIMAL_PRECISION, Math.max(s, da.precision() + db.precision()));
          DataType t = DataType.decimal(p, s);
          return emit(Opcode.I_MUL, t, a.reg, b.reg, bits(t), a, b);
        }
        case DIV -> {
          return divide(a, b, Math.min(DataType.MAX_DECIMAL64_PRECISION, Math.max(6, da.scale() + db.precision() + 1)));
        }
        case MOD -> {
          // the remainder at the common scale: its magnitude is below the divisor's, its sign the dividend's
          int s = Math.max(da.scale(), db.scale());
          int p = Math.min(DataType.MAX_DECIMAL_PRECISION, Math.max(da.precision() - da.scale(), db.precision() - db.scale()) + s);
          Value x = rescale(a, da.scale(), s);
          Value y = rescale(b, db.scale(), s);
          return emit(Opcode.I_MOD, DataType.decimal(p, s), x.reg, y.reg, 64, x, y);
        }
        default -> throw new NotSupportedException("decimal " + op + " is not supported yet");
      }
    }
    DataType t = wider(a.type, b.type);
    Opcode code = switch (op) {
      case ADD -> Opcode.I_ADD;
      case SUB -> Opcode.I_SUB;
      case MUL -> Opcode.I_MUL;
      case DIV -> Opcode.I_DIV;
      default -> Opcode.I_MOD;
    };
    return emit(code, t, a.reg, b.reg, 8 * t.byteWidth(), a, b);
  }

  /** DIV(a, b, scale): a decimal quotient at a given scale (what the SQL layer declared). */
  private Value decimalDivide(Expr.Call call) {
    if (!(call.args().get(2) instanceof Expr.Lit lit) || !(lit.value() instanceof Long scale)) {
      throw new UserException("the third argument of DIV must be an integer constant scale");
    }
    Value a = gen(call.args().get(0));
    Value b = gen(call.args().get(1));
    requireNumeric(a, Op.DIV);
    requireNumeric(b, Op.DIV);
    if (isFloat(a.type) || isFloat(b.type)) {
      return arithmetic(Op.DIV, a, b);
    }
    return divide(a, b, scale.intValue());
  }

  /**
   * Decimal a / b rounded half away from zero at scale {@code scale} (or at a's scale less b's,
   * when that is larger): a is scaled up by a power of ten first, in 128 bits.
   */
  private Value divide(Value a, Value b, int scale) {
    DataType da = asDecimal(a.type);
    DataType db = asDecimal(b.type);
    int s = Math.max(scale, da.scale() - db.scale());
    int k = s - da.scale() + db.scale();
    if (k > 18) {
      throw new NotSupportedException("a decimal quotient needing 10^" + k + " of scaling is not supported yet");
    }
    DataType t = DataType.decimal(DataType.MAX_DECIMAL_PRECISION, Math.min(s, DataType.MAX_DECIMAL_PRECISION));
    return emit(Opcode.DEC_DIV, t, a.reg, b.reg, k, a, b);
  }

  private Value negate(Value a) {
    requireNumeric(a, Op.NEG);
    if (isFloat(a.type)) {
      return emit(Opcode.F_NEG, a.type, a.reg, 0, 0, a);
    }
    return emit(Opcode.I_NEG, a.type, a.reg, 0, isDecimal(a.type) ? bits(a.type) : 8 * a.type.byteWidth(), a);
  }

  // ---- strings ----

  private Value like(Expr.Call call) {
    List<Expr> args = call.args();
    if (args.size() != 2 && args.size() != 3) {
      throw new UserException("LIKE takes a value, a pattern and an optional escape character");
    }
    int escape = -1;
    if (args.size() == 3) {
      if (!(args.get(2) instanceof Expr.Lit lit) || !(lit.value() instanceof String esc)) {
        throw new NotSupportedException("a LIKE escape must be a string constant");
      }
      if (esc.length() != 1 || esc.charAt(0) > 0x7F) {
        throw new UserException("a LIKE escape must be one character" + (esc.length() == 1 ? " (ASCII, for now)" : "") + ": '" + esc + "'");
      }
      escape = esc.charAt(0);
      if (args.get(1) instanceof Expr.Lit p && p.value() instanceof String pattern && endsWithLoneEscape(pattern, esc.charAt(0))) {
        throw new UserException("LIKE pattern must not end with the escape character: '" + pattern + "'");
      }
    }
    Value v = gen(args.get(0));
    requireString(v, "LIKE");
    Value p = gen(args.get(1));
    requireString(p, "LIKE");
    return emit(Opcode.LIKE, DataType.BOOL, v.reg, p.reg, escape, v, p);
  }

  private Value substring(Expr.Call call) {
    List<Expr> args = call.args();
    if (args.size() != 2 && args.size() != 3) {
      throw new UserException("SUBSTRING takes a string, a start and an optional length");
    }
    Value s = gen(args.get(0));
    requireString(s, "SUBSTRING");
    Value start = gen(args.get(1));
    Value length = args.size() == 3 ? gen(args.get(2)) : null;
    for (Value v : length == null ? List.of(start) : List.of(start, length)) {
      if (!isInt(v.type)) {
        throw new UserException("SUBSTRING positions must be integers, not " + v.type);
      }
    }
    return length == null ? emit(Opcode.SUBSTRING, DataType.STRING, s.reg, start.reg, -1, s, start)
        : emit(Opcode.SUBSTRING, DataType.STRING, s.reg, start.reg, length.reg, s, start, length);
  }

  private static boolean endsWithLoneEscape(String pattern, char escape) {
    int run = 0;
    for (int i = pattern.length() - 1; i >= 0 && pattern.charAt(i) == escape; i--) {
      run++;
    }
    return run % 2 == 1;
  }

  private static void requireString(Value v, String what) {
    if (v.type.id() != TypeId.STRING) {
      throw new UserException(what + " needs a string, not " + v.type);
    }
  }

  // ---- casts ----

  private Value cast(Value v, DataType to) {
    DataType from = v.type;
    if (from.equals(to)) {
      return v;
    }
    if (from.id() == TypeId.STRING) {
      return parse(v, to);
    }
    if (to.id() == TypeId.STRING) {
      // StringBuild computes these ahead of the program
      throw new dev.gpudf.columnar.error.InternalException("CAST to VARCHAR reached the expression compiler");
    }
    if (isNumeric(from) && isNumeric(to)) {
      if (isFloat(to)) {
        Value d = toDouble(v);
        return to.equals(DataType.FLOAT32) ? emit(Opcode.TO_F32, to, d.reg, 0, 0, d) : new Value(d.reg, to);
      }
      if (isInt(to)) {
        Value i = isFloat(from) ? emit(Opcode.F2I, DataType.INT64, v.reg, 0, 0, v)
            : isDecimal(from) ? scaleDown(v, from.scale()) : v;
        return emit(Opcode.RANGE_CHECK, to, i.reg, 0, 8 * to.byteWidth(), i);
      }
      Value scaled;
      if (isFloat(from)) {
        scaled = emit(Opcode.F2DEC, to, v.reg, constant(Double.doubleToRawLongBits(Math.pow(10, to.scale()))), bits(to), v);
      } else {
        int fromScale = asDecimal(from).scale();
        scaled = to.scale() >= fromScale ? rescale(v, fromScale, to.scale()) : scaleDown(v, fromScale - to.scale());
      }
      if (to.precision() <= DataType.MAX_DECIMAL64_PRECISION) {
        scaled = emit(Opcode.PRECISION_CHECK, to, scaled.reg, constant(BigDecimal.TEN.pow(to.precision()).longValueExact()), 0,
            scaled);
      }
      return new Value(scaled.reg, to);
    }
    if (to.id() == TypeId.BOOL && isInt(from)) {
      Value zero = emitKeep(Opcode.LOAD_CONST, from, constant(0), 0, 0);
      return emit(Opcode.CMP_I, DataType.BOOL, v.reg, zero.reg, Opcode.Cmp.NE.ordinal(), v, zero);
    }
    if (from.id() == TypeId.BOOL && isInt(to)) {
      return new Value(v.reg, to);
    }
    if (from.id() == TypeId.DATE && (to.id() == TypeId.INT32 || to.id() == TypeId.INT64)) {
      // a DATE's register is its day number already (SQL has no such CAST; date functions use it)
      return new Value(v.reg, to);
    }
    if (from.id() == TypeId.TIMESTAMP && to.id() == TypeId.INT64) {
      // a TIMESTAMP's register is its count of units since the epoch (no SQL CAST; time-of-day parts use it)
      return new Value(v.reg, to);
    }
    if (from.id() == TypeId.DATE && to.id() == TypeId.TIMESTAMP) {
      return emit(Opcode.SCALE_UP, to, v.reg, constant(unitsPerDay(to)), 0, v);
    }
    if (from.id() == TypeId.TIMESTAMP && to.id() == TypeId.DATE) {
      Value days = emit(Opcode.FLOOR_DIV, DataType.INT64, v.reg, constant(unitsPerDay(from)), 0, v);
      return emit(Opcode.RANGE_CHECK, to, days.reg, 0, 32, days);
    }
    if (from.id() == TypeId.TIMESTAMP && to.id() == TypeId.TIMESTAMP) {
      long f = unitsPerDay(from) / 86_400L;
      long t = unitsPerDay(to) / 86_400L;
      return t >= f ? emit(Opcode.SCALE_UP, to, v.reg, constant(t / f), 0, v)
          : emit(Opcode.FLOOR_DIV, to, v.reg, constant(f / t), 0, v);
    }
    throw new UserException("cannot cast " + from + " to " + to);
  }

  /** CAST of string {@code v} to {@code to}; a string that is no such value is an error naming it. */
  private Value parse(Value v, DataType to) {
    switch (to.id()) {
      case INT8, INT16, INT32, INT64 -> {
        Value i = emit(Opcode.PARSE, DataType.INT64, v.reg, 0, Opcode.ParseKind.INT64.ordinal(), v);
        return emit(Opcode.RANGE_CHECK, to, i.reg, 0, 8 * to.byteWidth(), i);
      }
      case DECIMAL -> {
        if (!to.isDecimal64()) {
          throw new NotSupportedException("CAST of a string to " + to + " (beyond 18 digits) is not supported yet");
        }
        int scale = constant(to.scale());
        constant(BigDecimal.TEN.pow(to.precision()).longValueExact());
        return emit(Opcode.PARSE, to, v.reg, scale, Opcode.ParseKind.DECIMAL64.ordinal(), v);
      }
      case DATE -> {
        return emit(Opcode.PARSE, to, v.reg, 0, Opcode.ParseKind.DATE.ordinal(), v);
      }
      case BOOL -> {
        return emit(Opcode.PARSE, to, v.reg, 0, Opcode.ParseKind.BOOL.ordinal(), v);
      }
      case FLOAT64, FLOAT32 -> {
        Value d = emit(Opcode.PARSE, DataType.FLOAT64, v.reg, 0, Opcode.ParseKind.FLOAT64.ordinal(), v);
        return to.equals(DataType.FLOAT32) ? emit(Opcode.TO_F32, to, d.reg, 0, 0, d) : d;
      }
      default -> throw new NotSupportedException("CAST of a string to " + to + " is not supported yet");
    }
  }

  /**
   * {@code v} divided by 10^{@code digits}, rounded half away from zero. Past 18 digits the power
   * passes a 64-bit word (TPC-H q11 at SF30 scales a product down by 21 digits): the value is cut
   * (truncated) by 10^(digits - 18) first, then rounded by 10^18, which rounds as one division
   * would, since every halfway point is a multiple of what the cut drops; past 36 digits both steps
   * leave 0, the answer for any 64-bit value.
   */
  private Value scaleDown(Value v, int digits) {
    if (digits <= MAX_POWER) {
      return digits == 0 ? v : emit(Opcode.SCALE_DOWN, DataType.INT64, v.reg, constant(pow10(digits)), 0, v);
    }
    Value tens = emitKeep(Opcode.LOAD_CONST, DataType.INT64, constant(pow10(Math.min(digits - MAX_POWER, MAX_POWER))), 0, 0);
    Value cut = emit(Opcode.I_DIV, DataType.INT64, v.reg, tens.reg, 64, v, tens);
    return emit(Opcode.SCALE_DOWN, DataType.INT64, cut.reg, constant(pow10(MAX_POWER)), 0, cut);
  }

  /** The largest power of ten a 64-bit word holds: 10^18. */
  private static final int MAX_POWER = 18;

  /** 10^{@code digits} as a 64-bit constant; a typed error past 10^18, which no 64-bit value can be scaled by and stay whole. */
  private static long pow10(int digits) {
    if (digits > MAX_POWER) {
      throw new NotSupportedException("scaling a decimal by 10^" + digits + " (beyond 18 digits) is not supported yet");
    }
    return BigDecimal.TEN.pow(digits).longValueExact();
  }

  // ---- math ----

  private Value abs(Value v) {
    requireNumeric(v, Op.ABS);
    if (isFloat(v.type)) {
      return emit(Opcode.F_MATH, v.type, v.reg, v.reg, Opcode.MathFn.ABS.ordinal(), v);
    }
    return emit(Opcode.I_ABS, v.type, v.reg, 0, isDecimal(v.type) ? bits(v.type) : 8 * v.type.byteWidth(), v);
  }

  private Value math(Op op, Value a, Value b) {
    requireNumeric(a, op);
    Value x = toDouble(a);
    Value y = b == null ? x : toDouble(b);
    if (b != null) {
      requireNumeric(b, op);
    }
    Opcode.MathFn fn = Opcode.MathFn.valueOf(op.name());
    return b == null ? emit(Opcode.F_MATH, DataType.FLOAT64, x.reg, x.reg, fn.ordinal(), x)
        : emit(Opcode.F_MATH, DataType.FLOAT64, x.reg, y.reg, fn.ordinal(), x, y);
  }

  private DataType typeOf(Expr e) {
    return ExprCompiler.compile(e, input).result();
  }

  private static Expr zero(DataType t) {
    return Expr.cast(Expr.lit(0), t);
  }

  private static Expr call(Op op, Expr... args) {
    return Expr.call(op, args);
  }

  private Value round(Expr.Call call) {
    if (call.args().isEmpty() || call.args().size() > 2) {
      throw new UserException("ROUND takes a value and optionally a number of digits");
    }
    int digits = 0;
    if (call.args().size() == 2) {
      if (!(call.args().get(1) instanceof Expr.Lit lit) || !(lit.value() instanceof Long d) || !isInt(lit.type())) {
        throw new NotSupportedException("ROUND's number of digits must be an integer constant");
      }
      digits = (int) Math.max(-40, Math.min(40, d));
    }
    Value v = gen(call.args().get(0));
    requireNumeric(v, Op.ROUND);
    if (isFloat(v.type)) {
      int scale = constant(Double.doubleToRawLongBits(Math.pow(10, digits)));
      Value y = emitKeep(Opcode.LOAD_CONST, DataType.FLOAT64, scale, 0, 0);
      Value f = emit(Opcode.F_MATH, DataType.FLOAT64, v.reg, y.reg, Opcode.MathFn.ROUND.ordinal(), v, y);
      return v.type.equals(DataType.FLOAT32) ? emit(Opcode.TO_F32, v.type, f.reg, 0, 0, f) : new Value(f.reg, v.type);
    }
    int cut = (isDecimal(v.type) ? v.type.scale() : 0) - digits;
    if (cut <= 0) {
      return v;
    }
    if (cut > 18) {
      throw new NotSupportedException("ROUND to " + digits + " digits of " + v.type + " is not supported");
    }
    int pow = constant(BigDecimal.TEN.pow(cut).longValueExact());
    Value q = emit(Opcode.SCALE_DOWN, DataType.INT64, v.reg, pow, 0, v);
    Value back = emit(Opcode.SCALE_UP, DataType.INT64, q.reg, pow, 0, q);
    // rounding up may need one digit more than the type holds: 99.5 in DECIMAL(3, 1) is 100
    return v.type.id() == TypeId.DECIMAL && v.type.isDecimal64()
        ? emit(Opcode.PRECISION_CHECK, v.type, back.reg, constant(BigDecimal.TEN.pow(v.type.precision()).longValueExact()), 0,
            back)
        : emit(Opcode.RANGE_CHECK, v.type, back.reg, 0, 8 * v.type.byteWidth(), back);
  }

  private Value floorCeil(Op op, Value v) {
    requireNumeric(v, op);
    if (isFloat(v.type)) {
      Opcode.MathFn fn = op == Op.FLOOR ? Opcode.MathFn.FLOOR : Opcode.MathFn.CEIL;
      return emit(Opcode.F_MATH, v.type, v.reg, v.reg, fn.ordinal(), v);
    }
    if (isInt(v.type) || v.type.scale() == 0) {
      return v;
    }
    DataType to = DataType.decimal(Math.min(DataType.MAX_DECIMAL_PRECISION, v.type.precision() - v.type.scale() + 1), 0);
    int divisor = constant(pow10(v.type.scale()));
    if (op == Op.FLOOR) {
      return emit(Opcode.FLOOR_DIV, to, v.reg, divisor, 0, v);
    }
    // ceil(x) = -floor(-x)
    Value neg = emit(Opcode.I_NEG, v.type, v.reg, 0, 64, v);
    Value floored = emit(Opcode.FLOOR_DIV, to, neg.reg, divisor, 0, neg);
    return emit(Opcode.I_NEG, to, floored.reg, 0, 64, floored);
  }

  /** DATE or TIMESTAMP {@code t} moved by {@code n} months, days or milliseconds. */
  private Value calendar(Op op, Value t, Value n) {
    if (!isInt(n.type)) {
      throw new UserException(op + " takes an integer count, not " + n.type);
    }
    if (t.type.id() == TypeId.DATE) {
      return switch (op) {
        case ADD_MONTHS -> emit(Opcode.ADD_MONTHS, DataType.DATE, t.reg, n.reg, 0, t, n);
        case ADD_DAYS -> emit(Opcode.I_ADD, DataType.DATE, t.reg, n.reg, 32, t, n);
        default -> throw new UserException("a DATE moves by whole days, not milliseconds");
      };
    }
    if (t.type.id() != TypeId.TIMESTAMP) {
      throw new UserException(op + " takes a DATE or TIMESTAMP, not " + t.type);
    }
    long perDay = unitsPerDay(t.type);
    int perDayConst = constant(perDay);
    if (op == Op.ADD_DAYS) {
      Value delta = emit(Opcode.SCALE_UP, DataType.INT64, n.reg, perDayConst, 0, n);
      return emit(Opcode.I_ADD, t.type, t.reg, delta.reg, 64, t, delta);
    }
    if (op == Op.ADD_MILLIS) {
      // a timestamp in seconds takes whole seconds: the milliseconds are floored
      Value delta = perDay >= 86_400_000L ? emit(Opcode.SCALE_UP, DataType.INT64, n.reg, constant(perDay / 86_400_000L), 0, n)
          : emit(Opcode.FLOOR_DIV, DataType.INT64, n.reg, constant(1000), 0, n);
      return emit(Opcode.I_ADD, t.type, t.reg, delta.reg, 64, t, delta);
    }
    // months move the day; the time of day stays
    Value days = emitKeep(Opcode.FLOOR_DIV, DataType.INT64, t.reg, perDayConst, 0);
    Value start = emitKeep(Opcode.SCALE_UP, DataType.INT64, days.reg, perDayConst, 0);
    Value time = emit(Opcode.I_SUB, DataType.INT64, t.reg, start.reg, 64, t, start);
    Value moved = emit(Opcode.ADD_MONTHS, DataType.INT64, days.reg, n.reg, 0, days, n);
    Value back = emit(Opcode.SCALE_UP, DataType.INT64, moved.reg, perDayConst, 0, moved);
    return emit(Opcode.I_ADD, t.type, back.reg, time.reg, 64, back, time);
  }

  private Value extract(Op op, Value v) {
    Value days = switch (v.type.id()) {
      case DATE -> v;
      case TIMESTAMP -> emit(Opcode.FLOOR_DIV, DataType.INT64, v.reg, constant(unitsPerDay(v.type)), 0, v);
      default -> throw new UserException(op + " needs a DATE or TIMESTAMP, not " + v.type);
    };
    int field = op == Op.EXTRACT_YEAR ? 0 : op == Op.EXTRACT_MONTH ? 1 : 2;
    return emit(Opcode.CIVIL, DataType.INT32, days.reg, 0, field, days);
  }

  private static long unitsPerDay(DataType t) {
    return switch (t.timeUnit()) {
      case SECOND -> 86_400L;
      case MILLISECOND -> 86_400_000L;
      case MICROSECOND -> 86_400_000_000L;
      case NANOSECOND -> 86_400_000_000_000L;
    };
  }

  // ---- comparisons and logic ----

  private Value compare(Op op, Value a, Value b) {
    int cmp = switch (op) {
      case EQ -> Opcode.Cmp.EQ.ordinal();
      case NE -> Opcode.Cmp.NE.ordinal();
      case LT -> Opcode.Cmp.LT.ordinal();
      case LE -> Opcode.Cmp.LE.ordinal();
      case GT -> Opcode.Cmp.GT.ordinal();
      default -> Opcode.Cmp.GE.ordinal();
    };
    if (isNumeric(a.type) && isNumeric(b.type)) {
      if (isFloat(a.type) || isFloat(b.type)) {
        Value x = toDouble(a);
        Value y = toDouble(b);
        return emit(Opcode.CMP_F, DataType.BOOL, x.reg, y.reg, cmp, x, y);
      }
      if (isDecimal(a.type) || isDecimal(b.type)) {
        int s = Math.max(asDecimal(a.type).scale(), asDecimal(b.type).scale());
        a = rescale(a, asDecimal(a.type).scale(), s);
        b = rescale(b, asDecimal(b.type).scale(), s);
      }
      return emit(Opcode.CMP_I, DataType.BOOL, a.reg, b.reg, cmp, a, b);
    }
    if (!a.type.equals(b.type)) {
      throw new UserException("cannot compare " + a.type + " with " + b.type);
    }
    if (a.type.id() == TypeId.STRING) {
      return emit(Opcode.CMP_S, DataType.BOOL, a.reg, b.reg, cmp, a, b);
    }
    return emit(Opcode.CMP_I, DataType.BOOL, a.reg, b.reg, cmp, a, b);
  }

  private Value logic(Op op, List<Expr> args) {
    if (args.size() < 2) {
      throw new UserException(op + " takes at least two arguments");
    }
    Value acc = bool(gen(args.get(0)), op.name());
    for (int i = 1; i < args.size(); i++) {
      Value next = bool(gen(args.get(i)), op.name());
      acc = emit(op == Op.AND ? Opcode.AND : Opcode.OR, DataType.BOOL, acc.reg, next.reg, 0, acc, next);
    }
    return acc;
  }

  private Value not(Value v) {
    return emit(Opcode.NOT, DataType.BOOL, v.reg, 0, 0, v);
  }

  private Value distinct(Op op, Value a, Value b) {
    // distinct = a null ? b not null : (b null ? true : a <> b); each operand register is read
    // several times, so nothing is freed until the end
    Value ne = compareKeeping(Op.NE, a, b);
    Value t = emitKeep(Opcode.LOAD_CONST, DataType.BOOL, constant(1), 0, 0);
    Value bNull = emitKeep(Opcode.IS_NULL, DataType.BOOL, b.reg, 0, 0);
    Value inner = emit(Opcode.SELECT, DataType.BOOL, bNull.reg, t.reg, ne.reg, bNull, t, ne);
    Value aNull = emitKeep(Opcode.IS_NULL, DataType.BOOL, a.reg, 0, 0);
    Value bNotNull = emit(Opcode.IS_NOT_NULL, DataType.BOOL, b.reg, 0, 0, b);
    Value d = emit(Opcode.SELECT, DataType.BOOL, aNull.reg, bNotNull.reg, inner.reg, aNull, bNotNull, inner);
    release(a);
    return op == Op.IS_DISTINCT_FROM ? d : not(d);
  }

  private Value compareKeeping(Op op, Value a, Value b) {
    // compare() frees its operands; these are still needed, so compare copies
    return compare(op, copy(a), copy(b));
  }

  private Value copy(Value v) {
    // SELECT(TRUE, v, v) would do, but a dedicated copy is cheaper: v IS NULL ? v : v
    return emitKeep(Opcode.SELECT, v.type, trueConst().reg, v.reg, v.reg);
  }

  private Value trueConst() {
    return emitKeep(Opcode.LOAD_CONST, DataType.BOOL, constant(1), 0, 0);
  }

  // ---- CASE, COALESCE, IN ----

  private Value caseWhen(List<Expr> args) {
    if (args.size() < 3 || args.size() % 2 == 0) {
      throw new UserException("CASE takes pairs of WHEN and THEN and an ELSE");
    }
    List<Value> values = new ArrayList<>();
    List<Value> conds = new ArrayList<>();
    for (int i = 0; i + 1 < args.size(); i += 2) {
      conds.add(bool(gen(args.get(i)), "CASE WHEN"));
      values.add(gen(args.get(i + 1)));
    }
    values.add(gen(args.get(args.size() - 1)));
    DataType t = common(values.stream().map(Value::type).toList(), "CASE");
    Value acc = convert(values.get(values.size() - 1), t);
    for (int i = conds.size() - 1; i >= 0; i--) {
      Value v = convert(values.get(i), t);
      acc = emit(Opcode.SELECT, t, conds.get(i).reg, v.reg, acc.reg, conds.get(i), v, acc);
    }
    return acc;
  }

  private Value coalesce(List<Expr> args) {
    if (args.isEmpty()) {
      throw new UserException("COALESCE takes at least one argument");
    }
    List<Value> values = new ArrayList<>();
    for (Expr a : args) {
      values.add(gen(a));
    }
    DataType t = common(values.stream().map(Value::type).toList(), "COALESCE");
    Value acc = convert(values.get(values.size() - 1), t);
    for (int i = values.size() - 2; i >= 0; i--) {
      Value v = convert(values.get(i), t);
      Value present = emitKeep(Opcode.IS_NOT_NULL, DataType.BOOL, v.reg, 0, 0);
      acc = emit(Opcode.SELECT, t, present.reg, v.reg, acc.reg, present, v, acc);
    }
    return acc;
  }

  private Value in(List<Expr> args) {
    if (args.size() < 2) {
      throw new UserException("IN takes a value and at least one list item");
    }
    List<Expr> tests = new ArrayList<>();
    for (int i = 1; i < args.size(); i++) {
      tests.add(Expr.call(Op.EQ, args.get(0), args.get(i)));
    }
    return tests.size() == 1 ? gen(tests.get(0)) : logic(Op.OR, tests);
  }

  // ---- types ----

  private DataType common(List<DataType> types, String what) {
    DataType t = null;
    for (DataType x : types) {
      if (t == null || t.equals(x)) {
        t = x;
      } else if (isNumeric(t) && isNumeric(x)) {
        if (isFloat(t) || isFloat(x)) {
          t = DataType.FLOAT64;
        } else if (isDecimal(t) || isDecimal(x)) {
          DataType a = asDecimal(t);
          DataType b = asDecimal(x);
          int s = Math.max(a.scale(), b.scale());
          t = DataType.decimal(Math.min(38, Math.max(a.precision() - a.scale(), b.precision() - b.scale()) + s), s);
        } else {
          t = wider(t, x);
        }
      } else {
        throw new UserException(what + " mixes " + t + " and " + x);
      }
    }
    return t;
  }

  private Value convert(Value v, DataType t) {
    if (v.type.equals(t)) {
      return v;
    }
    if (isFloat(t)) {
      Value d = toDouble(v);
      return new Value(d.reg, t);
    }
    if (isDecimal(t)) {
      Value r = rescale(v, asDecimal(v.type).scale(), t.scale());
      return new Value(r.reg, t);
    }
    // a narrower integer: registers are int64 already
    return new Value(v.reg, t);
  }

  private Value toDouble(Value v) {
    if (isFloat(v.type)) {
      return v;
    }
    if (isDecimal(v.type)) {
      return emit(Opcode.D2F, DataType.FLOAT64, v.reg, constant(Double.doubleToRawLongBits(Math.pow(10, v.type.scale()))), 0, v);
    }
    return emit(Opcode.I2F, DataType.FLOAT64, v.reg, 0, 0, v);
  }

  /**
   * {@code v} at scale {@code to}: multiplied by 10^(to - from), by at most 10^18 a step (a
   * product scaled by 21 digits meets a sum at scale 2 in TPC-H q11 at SF30).
   */
  private Value rescale(Value v, int from, int to) {
    int precision = asDecimal(v.type).precision();
    for (int at = from; at < to; ) {
      int step = Math.min(MAX_POWER, to - at);
      at += step;
      DataType t = DataType.decimal(Math.min(DataType.MAX_DECIMAL_PRECISION, precision + at - from), at);
      v = emit(Opcode.SCALE_UP, t, v.reg, constant(pow10(step)), bits(t), v);
    }
    return v;
  }

  /**
   * The width a decimal operation's c operand declares: 64 for 18 digits or fewer, where passing
   * 64 bits is an SQL overflow; 128 otherwise, where it is {@link Opcode#ERR_WIDE} (the
   * evaluators hold 64 bits; {@link Evaluate} then runs the program again on 128 bits).
   */
  private static int bits(DataType decimal) {
    return decimal.isDecimal64() ? 64 : 128;
  }

  private Value bool(Value v, String what) {
    if (v.type.id() != TypeId.BOOL) {
      throw new UserException(what + " needs a BOOL argument, not " + v.type);
    }
    return v;
  }

  private static void requireNumeric(Value v, Op op) {
    if (!isNumeric(v.type)) {
      throw new UserException(op + " needs numbers, not " + v.type);
    }
  }

  private static boolean isNumeric(DataType t) {
    return isInt(t) || isFloat(t) || isDecimal(t);
  }

  private static boolean isInt(DataType t) {
    return t.id() == TypeId.INT8 || t.id() == TypeId.INT16 || t.id() == TypeId.INT32 || t.id() == TypeId.INT64;
  }

  private static boolean isSmallInt(DataType t) {
    return t.id() == TypeId.INT8 || t.id() == TypeId.INT16;
  }

  private static boolean isFloat(DataType t) {
    return t.id() == TypeId.FLOAT32 || t.id() == TypeId.FLOAT64;
  }

  private static boolean isDecimal(DataType t) {
    return t.id() == TypeId.DECIMAL;
  }

  /** An integer as the decimal that holds all its values (scale 0). */
  private static DataType asDecimal(DataType t) {
    return switch (t.id()) {
      case DECIMAL -> t;
      case INT8 -> DataType.decimal(3, 0);
      case INT16 -> DataType.decimal(5, 0);
      case INT32 -> DataType.decimal(10, 0);
      case INT64 -> DataType.decimal(19, 0);
      default -> throw new IllegalArgumentException(t.toString());
    };
  }

  private static DataType wider(DataType a, DataType b) {
    return a.byteWidth() >= b.byteWidth() ? a : b;
  }

  // ---- emission ----

  private int constant(long bits) {
    constants.add(bits);
    return constants.size() - 1;
  }

  /** Emits an instruction into a fresh register and frees the operand registers {@code consumed}. */
  private Value emit(Opcode op, DataType type, int a, int b, int c, Value... consumed) {
    for (Value v : consumed) {
      release(v);
    }
    return emitKeep(op, type, a, b, c);
  }

  private Value emitKeep(Opcode op, DataType type, int a, int b, int c) {
    int dst;
    if (!free.isEmpty()) {
      dst = free.pop();
    } else {
      dst = registers++;
      if (registers > Program.MAX_REGISTERS) {
        throw new NotSupportedException("expression too large: it needs more than " + Program.MAX_REGISTERS + " registers");
      }
    }
    code.add(op.ordinal());
    code.add(dst);
    code.add(a);
    code.add(b);
    code.add(c);
    return new Value(dst, type);
  }

  private void release(Value v) {
    if (!free.contains(v.reg)) {
      free.push(v.reg);
    }
  }
}
