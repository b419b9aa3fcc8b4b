package dev.gpudf.kernels;

import dev.gpudf.kernels.Evaluate.StoreKind;

/**
 * A {@link Program} translated into a PTX kernel of its own, which the driver compiles for the
 * device ({@link GeneratedKernels}): each program register becomes machine registers (value, null
 * flag, error code) and the instructions become straight-line code, so nothing is decoded or
 * dispatched per row and no register file sits in local memory. The interpreter in {@code expr.cu}
 * spends most of its time on exactly that; on memory-bound arithmetic the generated kernel runs at
 * the speed of its loads and stores.
 *
 * <p>The semantics are the interpreter's, instruction for instruction (its {@code step}: which
 * error wins, when a result is NULL, the overflow checks), so {@link CpuEval} is the twin of both.
 * Only arithmetic-only programs ({@link Program#arithmeticOnly}) with a fixed-width result are
 * translated; the rest stay with the interpreter. The kernel takes the interpreter's parameters
 * and reads the input column table and, once before its loop, the values of the program's {@code
 * LOAD_CONST}s from the constants array: a query's literals (and the dictionary codes they become)
 * are not in the text, so programs that differ only in them share one compiled kernel, in a process
 * ({@link GeneratedKernels}) and in the driver's cache of compiled PTX across processes. The
 * constants that shape the arithmetic (scales, limits) are written into the code.
 */
final class PtxProgram {
  /** The entry point of every generated module. */
  static final String ENTRY = "expr_generated_kernel";
  private static final String ALL_LANES = "0xffffffff";

  private final Program program;
  private final StoreKind store;
  private final int registerMask;
  private final StringBuilder body = new StringBuilder();
  private int preds;
  private int b16s;
  private int b32s;
  private int b64s;

  private PtxProgram(Program program, StoreKind store) {
    this.program = program;
    this.store = store;
    // operands the interpreter masks with its register file's size are masked the same way
    this.registerMask = program.registerFile() - 1;
  }

  /** Whether {@code p}, written out as {@code store}, has a generated form. */
  static boolean supports(Program p, StoreKind store) {
    return p.arithmeticOnly() && store != StoreKind.STRLEN && store != StoreKind.STRCOPY;
  }

  /** The PTX module text for {@code p} (which {@link #supports} must accept). */
  static String generate(Program p, StoreKind store) {
    if (!supports(p, store)) {
      throw new IllegalArgumentException("no generated form for a program stored as " + store);
    }
    return new PtxProgram(p, store).module();
  }

  private String module() {
    int slots = program.columns().size();
    line("ld.param.u64 %cols, [columns]");
    line("cvta.to.global.u64 %cols, %cols");
    line("ld.param.u64 %nrows, [n]");
    for (String[] param : new String[][] {{"%outp", "out"}, {"%validp", "out_validity"}, {"%errp", "error"}}) {
      line("ld.param.u64 " + param[0] + ", [" + param[1] + "]");
      line("cvta.to.global.u64 " + param[0] + ", " + param[0]);
    }
    java.util.BitSet literals = literals();
    if (!literals.isEmpty()) {
      line("ld.param.u64 %constp, [consts]");
      line("cvta.to.global.u64 %constp, %constp");
      literals.stream().forEach(k -> line("ld.global.nc.b64 %k" + k + ", [%constp+" + 8 * k + "]"));
    }
    for (int s = 0; s < slots; s++) {
      line("ld.global.nc.b64 %cd" + s + ", [%cols+" + 24 * s + "]");
      line("ld.global.nc.b64 %cv" + s + ", [%cols+" + (24 * s + 8) + "]");
      line("setp.ne.b64 %hv" + s + ", %cv" + s + ", 0");
    }
    line("mov.u32 %thread, %tid.x");
    line("and.b32 %lane, %thread, 31");
    line("setp.eq.u32 %lane0, %lane, 0");
    line("setp.eq.b32 %pT, %lane, %lane");
    line("setp.ne.b32 %pF, %lane, %lane");
    line("cvt.u64.u32 %lane64, %lane");
    line("mov.u32 %block, %ctaid.x");
    line("mov.u32 %width, %ntid.x");
    line("mov.u32 %blocks, %nctaid.x");
    // a warp takes 32 consecutive rows a pass (its validity word); the whole grid strides on
    line("mul.wide.u32 %base, %block, %width");
    line("cvt.u64.u32 %stride, %thread");
    line("add.s64 %base, %base, %stride");
    line("sub.s64 %base, %base, %lane64");
    line("mul.wide.u32 %stride, %blocks, %width");
    body.append("LOOP:\n");
    line("setp.ge.u64 %done, %base, %nrows");
    line("@%done bra.uni DONE");
    line("add.s64 %row, %base, %lane64");
    line("setp.lt.u64 %act, %row, %nrows");
    for (int r = 0; r <= registerMask; r++) {
      line("mov.b64 %v" + r + ", 0");
      line("mov.pred %n" + r + ", %pF");
      line("mov.b32 %e" + r + ", 0");
    }
    int[] code = program.code();
    Opcode[] ops = Opcode.values();
    for (int pc = 0; pc < code.length; pc += Program.WIDTH) {
      Opcode op = ops[code[pc]];
      body.append("  // ").append(op).append('\n');
      Out out = instruction(op, code[pc + 2], code[pc + 3], code[pc + 4]);
      int d = code[pc + 1] & registerMask;
      line("mov.b64 %v" + d + ", " + out.value);
      line("mov.pred %n" + d + ", " + out.isNull);
      line("mov.b32 %e" + d + ", " + out.error);
    }
    storeResult(program.resultRegister() & registerMask);
    line("add.s64 %base, %base, %stride");
    line("bra.uni LOOP");
    body.append("DONE:\n");
    line("ret");

    StringBuilder ptx = new StringBuilder();
    ptx.append(".version 7.0\n.target sm_70\n.address_size 64\n\n");
    ptx.append(".visible .entry ").append(ENTRY).append("(\n");
    ptx.append("  .param .u64 code, .param .u32 instructions, .param .u64 consts, .param .u64 pool,\n");
    ptx.append("  .param .u64 columns, .param .u64 n, .param .u32 result_reg, .param .u32 store,\n");
    ptx.append("  .param .u64 out, .param .u64 out_validity, .param .u64 error, .param .u64 str_offsets,\n");
    ptx.append("  .param .u64 str_chars)\n");
    ptx.append(".maxntid ").append(KernelLaunch.BLOCK).append(", 1, 1\n{\n");
    int registers = registerMask + 1;
    ptx.append("  .reg .b64 %v<").append(registers).append(">;\n");
    ptx.append("  .reg .pred %n<").append(registers).append(">;\n");
    ptx.append("  .reg .b32 %e<").append(registers).append(">;\n");
    if (slots > 0) {
      ptx.append("  .reg .b64 %cd<").append(slots).append(">, %cv<").append(slots).append(">;\n");
      ptx.append("  .reg .pred %hv<").append(slots).append(">;\n");
    }
    if (!literals.isEmpty()) {
      ptx.append("  .reg .b64 %constp, %k<").append(literals.length()).append(">;\n");
    }
    ptx.append("  .reg .pred %p<").append(Math.max(1, preds)).append(">;\n");
    ptx.append("  .reg .b16 %z<").append(Math.max(1, b16s)).append(">;\n");
    ptx.append("  .reg .b32 %y<").append(Math.max(1, b32s)).append(">;\n");
    ptx.append("  .reg .b64 %x<").append(Math.max(1, b64s)).append(">;\n");
    ptx.append("  .reg .b64 %cols, %nrows, %outp, %validp, %errp, %base, %stride, %row, %lane64;\n");
    ptx.append("  .reg .b32 %thread, %lane, %block, %width, %blocks;\n");
    ptx.append("  .reg .pred %lane0, %pT, %pF, %done, %act;\n");
    ptx.append(body).append("}\n");
    return ptx.toString();
  }

  /** The indexes into the constants array that {@code LOAD_CONST}s read. */
  private java.util.BitSet literals() {
    java.util.BitSet out = new java.util.BitSet();
    int[] code = program.code();
    for (int pc = 0; pc < code.length; pc += Program.WIDTH) {
      if (code[pc] == Opcode.LOAD_CONST.ordinal()) {
        out.set(code[pc + 2]);
      }
    }
    return out;
  }

  /** One instruction's result before it is written to its register: value, NULL flag, error code. */
  private record Out(String value, String isNull, String error) {}

  private Out instruction(Opcode op, int a, int b, int c) {
    long[] consts = program.constants();
    return switch (op) {
      case LOAD_COL -> loadColumn(a, Opcode.LoadKind.values()[c]);
      case LOAD_CONST -> new Out("%k" + a, b != 0 ? "%pT" : "%pF", "0");
      case I_ADD, I_SUB -> binary(a, b, () -> {
        String r = b64();
        line((op == Opcode.I_ADD ? "add.s64 " : "sub.s64 ") + r + ", " + v(a) + ", " + v(b));
        // two's-complement overflow: the sign of the result disagrees with both operands (ADD)
        // or with the minuend while the operands' signs differ (SUB)
        String t1 = b64();
        String t2 = b64();
        line("xor.b64 " + t1 + ", " + v(a) + ", " + (op == Opcode.I_ADD ? r : v(b)));
        line("xor.b64 " + t2 + ", " + (op == Opcode.I_ADD ? v(b) : v(a)) + ", " + r);
        line("and.b64 " + t1 + ", " + t1 + ", " + t2);
        String wrapped = pred();
        line("setp.lt.s64 " + wrapped + ", " + t1 + ", 0");
        return new Step(r, errorIf(or(wrapped, outside(r, c)), Opcode.overflow(c)));
      });
      case I_MUL -> binary(a, b, () -> multiply(v(a), v(b), c));
      case CMP_I -> binary(a, b, () -> new Step(flag(compare("s64", v(a), v(b), c)), null));
      case F_ADD, F_SUB, F_MUL, F_DIV -> binary(a, b, () -> {
        String r = b64();
        String name = switch (op) {
          case F_ADD -> "add.rn.f64 ";
          case F_SUB -> "sub.rn.f64 ";
          case F_MUL -> "mul.rn.f64 ";
          default -> "div.rn.f64 ";
        };
        line(name + r + ", " + v(a) + ", " + v(b));
        String error = null;
        if (op == Opcode.F_DIV) {
          String zero = pred();
          line("setp.eq.f64 " + zero + ", " + v(b) + ", 0d0000000000000000");
          error = errorIf(zero, Opcode.ERR_DIV_ZERO);
        }
        return new Step(c == 1 ? toFloat32(r) : r, error);
      });
      case CMP_F -> binary(a, b, () -> new Step(flag(compareDoubles(v(a), v(b), c)), null));
      case I_NEG -> unary(a, () -> {
        String r = b64();
        line("neg.s64 " + r + ", " + v(a));
        return new Step(r, errorIf(or(isMin(v(a)), outside(r, c)), Opcode.overflow(c)));
      });
      case F_NEG -> passing(a, unaryOp("neg.f64", v(a)));
      case I2F -> passing(a, unaryOp("cvt.rn.f64.s64", v(a)));
      case TO_F32 -> passing(a, toFloat32(v(a)));
      case NOT -> passing(a, binaryOp("sub.s64", constant(1), v(a)));
      case SCALE_UP -> unary(a, () -> multiply(v(a), constant(consts[b]), c == 128 ? 128 : 64));
      case D2F -> passing(a, binaryOp("div.rn.f64", unaryOp("cvt.rn.f64.s64", v(a)), constant(consts[b])));
      case AND, OR -> logic(a, b, op == Opcode.AND ? 0 : 1);
      case IS_NULL, IS_NOT_NULL -> {
        String r = b64();
        line("selp.b64 " + r + ", " + (op == Opcode.IS_NULL ? "1, 0, " : "0, 1, ") + n(a));
        yield new Out(r, "%pF", e(a));
      }
      case SELECT -> select(a, b, c & registerMask);
      case FLOOR_DIV -> passing(a, floorDiv(v(a), constant(consts[b])));
      case CIVIL -> passing(a, civil(v(a), c));
      case RANGE_CHECK -> unary(a, () -> new Step(v(a), errorIf(outside(v(a), c), Opcode.ERR_OVERFLOW)));
      case PRECISION_CHECK -> unary(a, () -> {
        String beyond = pred();
        line("setp.ge.s64 " + beyond + ", " + unaryOp("abs.s64", v(a)) + ", " + constant(consts[b]));
        return new Step(v(a), errorIf(or(isMin(v(a)), beyond), Opcode.ERR_OVERFLOW));
      });
      case SCALE_DOWN -> unary(a, () -> new Step(divideRoundingAway(v(a), constant(consts[b])), null));
      case I_ABS -> unary(a, () -> {
        String min = isMin(v(a));
        String r = b64();
        line("selp.b64 " + r + ", 0, " + unaryOp("abs.s64", v(a)) + ", " + min);
        return new Step(r, errorIf(or(min, outside(r, c)), Opcode.overflow(c)));
      });
      default -> throw new IllegalStateException(op + " has no generated form");
    };
  }

  /** What an operation computed: its value and its own error code register (null: it cannot fail). */
  private record Step(String value, String error) {}

  private interface Compute {
    Step run();
  }

  /** Operands a and b: their first error wins, then NULL if either is NULL, else the operation. */
  private Out binary(int a, int b, Compute compute) {
    return gated(firstError(a, b), or(n(a), n(b)), compute.run());
  }

  /** a's error code if it has one, else b's (0: neither). */
  private String firstError(int a, int b) {
    String first = pred();
    line("setp.ne.u32 " + first + ", " + e(a) + ", 0");
    String error = b32();
    line("selp.b32 " + error + ", " + e(a) + ", " + e(b) + ", " + first);
    return error;
  }

  /** p and not q. */
  private String andNot(String p, String q) {
    String r = pred();
    line("not.pred " + r + ", " + q);
    line("and.pred " + r + ", " + r + ", " + p);
    return r;
  }

  /** Operand a: its error, then NULL, else the operation. */
  private Out unary(int a, Compute compute) {
    return gated(e(a), n(a), compute.run());
  }

  /** The operation's result unless an operand error or NULL came first (then value 0). */
  private Out gated(String operandError, String operandNull, Step step) {
    String failed = pred();
    line("setp.ne.u32 " + failed + ", " + operandError + ", 0");
    String error = operandError;
    if (step.error != null) {
      String own = b32();
      line("selp.b32 " + own + ", 0, " + step.error + ", " + operandNull);
      error = b32();
      line("selp.b32 " + error + ", " + operandError + ", " + own + ", " + failed);
    }
    String isNull = andNot(operandNull, failed);
    String value = b64();
    line("selp.b64 " + value + ", 0, " + step.value + ", " + or(failed, operandNull));
    return new Out(value, isNull, error);
  }

  /** Operand a's error and NULL flag pass through unchanged; the value is computed regardless. */
  private Out passing(int a, String value) {
    return new Out(value, n(a), e(a));
  }

  private Out loadColumn(int slot, Opcode.LoadKind kind) {
    String isNull = pred();
    String word = b32();
    String fetch = pred();
    line("mov.b32 " + word + ", 0xffffffff");
    line("and.pred " + fetch + ", %act, %hv" + slot);
    line("@" + fetch + " ld.global.nc.b32 " + word + ", [" + wordAddress("%cv" + slot) + "]");
    line("shr.b32 " + word + ", " + word + ", %lane");
    line("and.b32 " + word + ", " + word + ", 1");
    line("setp.eq.u32 " + isNull + ", " + word + ", 0");
    String data = "%cd" + slot;
    String r = b64();
    line("mov.b64 " + r + ", 0");
    String error = "0";
    switch (kind) {
      case I8, I16 -> {
        String h = b16();
        String type = kind == Opcode.LoadKind.I8 ? "s8" : "s16";
        line("mov.b16 " + h + ", 0");
        line("@%act ld.global.nc." + type + " " + h + ", [" + elementAddress(data, kind == Opcode.LoadKind.I8 ? 1 : 2) + "]");
        line("cvt.s64.s16 " + r + ", " + h);
      }
      case I32, F32 -> {
        String w = b32();
        line("mov.b32 " + w + ", 0");
        line("@%act ld.global.nc.b32 " + w + ", [" + elementAddress(data, 4) + "]");
        line((kind == Opcode.LoadKind.I32 ? "cvt.s64.s32 " : "cvt.f64.f32 ") + r + ", " + w);
      }
      case I64, F64 -> line("@%act ld.global.nc.b64 " + r + ", [" + elementAddress(data, 8) + "]");
      case I128 -> {
        String high = b64();
        line("mov.b64 " + high + ", 0");
        line("@%act ld.global.nc.v2.b64 {" + r + ", " + high + "}, [" + elementAddress(data, 16) + "]");
        // a value beyond 64 bits is an error of this engine (ERR_WIDE), unless the row is NULL
        String wide = pred();
        line("setp.ne.b64 " + wide + ", " + high + ", " + binaryOp("shr.s64", r, "63"));
        error = errorIf(andNot(wide, isNull), Opcode.ERR_WIDE);
      }
      case BITS -> {
        String w = b32();
        line("mov.b32 " + w + ", 0");
        line("@%act ld.global.nc.b32 " + w + ", [" + wordAddress(data) + "]");
        line("shr.b32 " + w + ", " + w + ", %lane");
        line("and.b32 " + w + ", " + w + ", 1");
        line("cvt.u64.u32 " + r + ", " + w);
      }
      default -> throw new IllegalStateException("load kind " + kind);
    }
    return new Out(r, isNull, error);
  }

  /** Three-valued AND (decisive 0) and OR (decisive 1): a side equal to decisive hides the other. */
  private Out logic(int a, int b, int decisive) {
    String decides = pred();
    String other = pred();
    line("setp.eq.s64 " + decides + ", " + v(a) + ", " + decisive);
    line("setp.eq.s64 " + other + ", " + v(b) + ", " + decisive);
    line("and.pred " + decides + ", " + decides + ", " + clean(a));
    line("and.pred " + other + ", " + other + ", " + clean(b));
    line("or.pred " + decides + ", " + decides + ", " + other);
    String operandError = firstError(a, b);
    String error = b32();
    line("selp.b32 " + error + ", 0, " + operandError + ", " + decides);
    String failed = pred();
    line("setp.ne.u32 " + failed + ", " + operandError + ", 0");
    String either = or(n(a), n(b));
    String open = pred();
    line("or.pred " + open + ", " + decides + ", " + failed);
    String isNull = andNot(either, open);
    String undecided = b64();
    line("selp.b64 " + undecided + ", 0, " + (1 - decisive) + ", " + or(failed, either));
    String value = b64();
    line("selp.b64 " + value + ", " + decisive + ", " + undecided + ", " + decides);
    return new Out(value, isNull, error);
  }

  /** Register r holds neither an error nor NULL. */
  private String clean(int r) {
    String p = pred();
    line("setp.eq.u32 " + p + ", " + e(r) + ", 0");
    return andNot(p, n(r));
  }

  /** a TRUE (not NULL, no error) picks register b, else register c; an error in a is the result. */
  private Out select(int a, int b, int c) {
    String one = pred();
    line("setp.eq.s64 " + one + ", " + v(a) + ", 1");
    String pick = andNot(one, n(a));
    String failed = pred();
    line("setp.ne.u32 " + failed + ", " + e(a) + ", 0");
    String chosen = b64();
    line("selp.b64 " + chosen + ", " + v(b) + ", " + v(c) + ", " + pick);
    String value = b64();
    line("selp.b64 " + value + ", 0, " + chosen + ", " + failed);
    String chosenError = b32();
    line("selp.b32 " + chosenError + ", " + e(b) + ", " + e(c) + ", " + pick);
    String error = b32();
    line("selp.b32 " + error + ", " + e(a) + ", " + chosenError + ", " + failed);
    String fromB = pred();
    line("and.pred " + fromB + ", " + pick + ", " + n(b));
    return new Out(value, andNot(or(fromB, andNot(n(c), pick)), failed), error);
  }

  /** Writes the result register for the active row, its validity bit and any error it carries. */
  private void storeResult(int res) {
    String failed = pred();
    line("setp.ne.u32 " + failed + ", " + e(res) + ", 0");
    String report = pred();
    line("and.pred " + report + ", " + failed + ", %act");
    String code = b64();
    line("shl.b64 " + code + ", %row, 8");
    line("or.b64 " + code + ", " + code + ", " + unaryOp("cvt.u64.u32", e(res)));
    line("@" + report + " red.global.min.u64 [%errp], " + code);
    String valid = andNot("%act", or(failed, n(res)));
    String value = v(res);
    switch (store) {
      case I8, I16 -> {
        String h = b16();
        line("cvt.u16.u64 " + h + ", " + value);
        boolean narrow = store == StoreKind.I8;
        line("@" + valid + " st.global." + (narrow ? "u8" : "u16") + " [" + elementAddress("%outp", narrow ? 1 : 2) + "], " + h);
      }
      case I32 -> line("@" + valid + " st.global.u32 [" + elementAddress("%outp", 4) + "], " + unaryOp("cvt.u32.u64", value));
      case I64, F64 -> line("@" + valid + " st.global.b64 [" + elementAddress("%outp", 8) + "], " + value);
      case F32 -> {
        String f = b32();
        line("cvt.rn.f32.f64 " + f + ", " + value);
        line("@" + valid + " st.global.f32 [" + elementAddress("%outp", 4) + "], " + f);
      }
      case D128 -> line("@" + valid + " st.global.v2.b64 [" + elementAddress("%outp", 16) + "], {" + value + ", "
          + binaryOp("shr.s64", value, "63") + "}");
      case BITS -> {
        String one = pred();
        line("setp.eq.s64 " + one + ", " + value + ", 1");
        line("and.pred " + one + ", " + one + ", " + valid);
        String bits = b32();
        line("vote.sync.ballot.b32 " + bits + ", " + one + ", " + ALL_LANES);
        line("@%lane0 st.global.b32 [" + wordAddress("%outp") + "], " + bits);
      }
      default -> throw new IllegalStateException("store " + store);
    }
    String word = b32();
    line("vote.sync.ballot.b32 " + word + ", " + valid + ", " + ALL_LANES);
    line("@%lane0 st.global.b32 [" + wordAddress("%validp") + "], " + word);
  }

  /**
   * x * y in 64 bits, an overflow when the product needs more than 64 bits or more than {@code bits}
   * ({@link Opcode#overflow}: for 128, {@link Opcode#ERR_WIDE}).
   */
  private Step multiply(String x, String y, int bits) {
    String r = binaryOp("mul.lo.s64", x, y);
    String wrapped = pred();
    line("setp.ne.b64 " + wrapped + ", " + binaryOp("mul.hi.s64", x, y) + ", " + binaryOp("shr.s64", r, "63"));
    return new Step(r, errorIf(or(wrapped, outside(r, bits)), Opcode.overflow(bits)));
  }

  /** A predicate: x is outside the signed range of {@code bits} bits; null when bits is 64. */
  private String outside(String x, int bits) {
    if (bits >= 64) {
      return null;
    }
    long limit = 1L << (bits - 1);
    String below = pred();
    String above = pred();
    line("setp.lt.s64 " + below + ", " + x + ", " + constant(-limit));
    line("setp.ge.s64 " + above + ", " + x + ", " + constant(limit));
    return or(below, above);
  }

  private String isMin(String x) {
    String p = pred();
    line("setp.eq.s64 " + p + ", " + x + ", " + constant(Long.MIN_VALUE));
    return p;
  }

  /** 1 or 0 as a 64-bit register. */
  private String flag(String p) {
    String r = b64();
    line("selp.b64 " + r + ", 1, 0, " + p);
    return r;
  }

  private String compare(String type, String x, String y, int cmp) {
    String p = pred();
    line("setp." + comparison(cmp) + "." + type + " " + p + ", " + x + ", " + y);
    return p;
  }

  private static String comparison(int cmp) {
    return switch (Opcode.Cmp.values()[cmp]) {
      case EQ -> "eq";
      case NE -> "ne";
      case LT -> "lt";
      case LE -> "le";
      case GT -> "gt";
      case GE -> "ge";
    };
  }

  /** The interpreter's cmp_f: NaN equals NaN and sorts above every number; then test against 0. */
  private String compareDoubles(String x, String y, int cmp) {
    String less = pred();
    String greater = pred();
    line("setp.lt.f64 " + less + ", " + x + ", " + y);
    line("setp.gt.f64 " + greater + ", " + x + ", " + y);
    String order = b32();
    line("selp.b32 " + order + ", -1, 0, " + less);
    line("selp.b32 " + order + ", 1, " + order + ", " + greater);
    String nanX = pred();
    String nanY = pred();
    line("testp.notanumber.f64 " + nanX + ", " + x);
    line("testp.notanumber.f64 " + nanY + ", " + y);
    String nanOrder = b32();
    line("selp.b32 " + nanOrder + ", 1, -1, " + nanX);
    String differ = pred();
    line("xor.pred " + differ + ", " + nanX + ", " + nanY);
    line("selp.b32 " + nanOrder + ", " + nanOrder + ", 0, " + differ);
    line("selp.b32 " + order + ", " + nanOrder + ", " + order + ", " + or(nanX, nanY));
    return compare("s32", order, "0", cmp);
  }

  private String toFloat32(String x) {
    String f = b32();
    line("cvt.rn.f32.f64 " + f + ", " + x);
    return unaryOp("cvt.f64.f32", f);
  }

  /** floor(x / y) (the interpreter's floor_div). */
  private String floorDiv(String x, String y) {
    String q = binaryOp("div.s64", x, y);
    String inexact = pred();
    line("setp.ne.s64 " + inexact + ", " + binaryOp("rem.s64", x, y) + ", 0");
    String negX = pred();
    String negY = pred();
    line("setp.lt.s64 " + negX + ", " + x + ", 0");
    line("setp.lt.s64 " + negY + ", " + y + ", 0");
    line("xor.pred " + negX + ", " + negX + ", " + negY);
    line("and.pred " + inexact + ", " + inexact + ", " + negX);
    String r = b64();
    line("selp.b64 " + r + ", " + binaryOp("sub.s64", q, "1") + ", " + q + ", " + inexact);
    return r;
  }

  /** x / d rounded half away from zero, d > 0 (the interpreter's divide_rounding_away). */
  private String divideRoundingAway(String x, String d) {
    String q = binaryOp("div.s64", x, d);
    String twice = binaryOp("shl.b64", unaryOp("abs.s64", binaryOp("rem.s64", x, d)), "1");
    String up = pred();
    line("setp.ge.s64 " + up + ", " + twice + ", " + d);
    String negative = pred();
    line("setp.lt.s64 " + negative + ", " + x + ", 0");
    String step = b64();
    line("selp.b64 " + step + ", -1, 1, " + negative);
    String r = b64();
    line("selp.b64 " + r + ", " + binaryOp("add.s64", q, step) + ", " + q + ", " + up);
    return r;
  }

  /** Calendar field (0 year, 1 month, 2 day) of a day number (the interpreter's civil). */
  private String civil(String days, int field) {
    String z = binaryOp("add.s64", days, "719468");
    String era = floorDiv(z, constant(146097));
    String doe = binaryOp("sub.s64", z, binaryOp("mul.lo.s64", era, "146097"));
    String yoe = binaryOp("sub.s64", doe, binaryOp("div.s64", doe, "1460"));
    yoe = binaryOp("add.s64", yoe, binaryOp("div.s64", doe, "36524"));
    yoe = binaryOp("sub.s64", yoe, binaryOp("div.s64", doe, "146096"));
    yoe = binaryOp("div.s64", yoe, "365");
    String yearStart = binaryOp("mul.lo.s64", yoe, "365");
    yearStart = binaryOp("add.s64", yearStart, binaryOp("div.s64", yoe, "4"));
    yearStart = binaryOp("sub.s64", yearStart, binaryOp("div.s64", yoe, "100"));
    String doy = binaryOp("sub.s64", doe, yearStart);
    String mp = binaryOp("div.s64", binaryOp("add.s64", binaryOp("mul.lo.s64", doy, "5"), "2"), "153");
    String early = pred();
    line("setp.lt.s64 " + early + ", " + mp + ", 10");
    String month = b64();
    line("selp.b64 " + month + ", " + binaryOp("add.s64", mp, "3") + ", " + binaryOp("sub.s64", mp, "9") + ", " + early);
    if (field == 1) {
      return month;
    }
    if (field == 2) {
      String monthStart = binaryOp("div.s64", binaryOp("add.s64", binaryOp("mul.lo.s64", mp, "153"), "2"), "5");
      return binaryOp("add.s64", binaryOp("sub.s64", doy, monthStart), "1");
    }
    String january = pred();
    line("setp.le.s64 " + january + ", " + month + ", 2");
    String year = binaryOp("add.s64", yoe, binaryOp("mul.lo.s64", era, "400"));
    String r = b64();
    line("selp.b64 " + r + ", " + binaryOp("add.s64", year, "1") + ", " + year + ", " + january);
    return r;
  }

  /** A 32-bit register holding {@code code} where p holds, else 0; null when p is null. */
  private String errorIf(String p, int code) {
    if (p == null) {
      return null;
    }
    String r = b32();
    line("selp.b32 " + r + ", " + code + ", 0, " + p);
    return r;
  }

  private String or(String p, String q) {
    if (p == null || q == null) {
      return p == null ? q : p;
    }
    String r = pred();
    line("or.pred " + r + ", " + p + ", " + q);
    return r;
  }

  private String constant(long value) {
    String r = b64();
    line("mov.b64 " + r + ", " + String.format("0x%016X", value));
    return r;
  }

  /** name's result in a new register, 32 or 64 bits as its destination type says. */
  private String unaryOp(String name, String x) {
    String[] parts = name.split("\\.");
    String destination = parts[0].equals("cvt") ? parts[parts.length - 2] : parts[parts.length - 1];
    String r = destination.endsWith("32") ? b32() : b64();
    line(name + " " + r + ", " + x);
    return r;
  }

  private String binaryOp(String name, String x, String y) {
    String r = b64();
    line(name + " " + r + ", " + x + ", " + y);
    return r;
  }

  /** Address of the element at the current row in an array of {@code width}-byte elements. */
  private String elementAddress(String base, int width) {
    String r = b64();
    line("mad.lo.s64 " + r + ", %row, " + width + ", " + base);
    return r;
  }

  /** Address of the current row's 32-bit word in a bitmap. */
  private String wordAddress(String bitmap) {
    String r = b64();
    line("shr.u64 " + r + ", %row, 5");
    line("mad.lo.s64 " + r + ", " + r + ", 4, " + bitmap);
    return r;
  }

  private String v(int r) {
    return "%v" + (r & registerMask);
  }

  private String n(int r) {
    return "%n" + (r & registerMask);
  }

  private String e(int r) {
    return "%e" + (r & registerMask);
  }

  private String pred() {
    return "%p" + preds++;
  }

  private String b16() {
    return "%z" + b16s++;
  }

  private String b32() {
    return "%y" + b32s++;
  }

  private String b64() {
    return "%x" + b64s++;
  }

  private void line(String instruction) {
    body.append("  ").append(instruction).append(";\n");
  }
}
