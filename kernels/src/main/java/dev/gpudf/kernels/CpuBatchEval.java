package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * {@link CpuEval} for arithmetic programs ({@link Program#arithmeticOnly}) and those that also
 * load, compare and LIKE strings ({@link #supports}), a batch of rows at a time: each instruction
 * is decoded once per batch and runs as a loop over the batch, which the JIT compiles into tight
 * code, where the row-at-a-time loop paid a dispatch per instruction and row. The semantics are
 * {@link CpuEval}'s, operation for operation (CpuBatchEvalTest compares the two); as there, an
 * operation's value is 0 where its result is NULL or an error.
 *
 * <p>A register whose batch holds no NULL and no error is <em>clean</em>: its null and error rows
 * are the shared all-false rows ({@link #NO_NULLS}, {@link #NO_ERRORS}), never written. An
 * operation over clean operands skips the null and error bookkeeping (a loop of one array instead
 * of four or more); one that can fail (overflow, division by zero) runs its loop once counting
 * failures and only where it found one runs again with the bookkeeping. Columns of files rarely
 * hold NULLs, so most batches take the clean loops. Each operation family is its own method: the
 * JIT compiles a small method in milliseconds, where one method of every loop took 140-220 ms of
 * a 2-core host's compiler per compilation, four times per query, while the query waited.
 */
final class CpuBatchEval {
  /** Rows per batch: each register holds this many values. */
  static final int BATCH = 1024;
  /** The null rows of every clean register: all false, never written. */
  private static final boolean[] NO_NULLS = new boolean[BATCH];
  /** The error rows of every clean register: all 0, never written. */
  private static final int[] NO_ERRORS = new int[BATCH];
  /** Every row live: the operands of a clean operation. Never written. */
  private static final boolean[] ALL_LIVE = new boolean[BATCH];

  static {
    java.util.Arrays.fill(ALL_LIVE, true);
  }

  /**
   * A batch's register file and scratch rows; one per thread. Operand fields that name a column
   * slot or a constant index the register file too (masked, as in {@link CpuEval}), so registers
   * past the program's all share one row of zeros, never written.
   */
  static final class Registers {
    final long[][] val = new long[Program.MAX_REGISTERS][];
    /** A register's null rows as read: its own rows ({@link #ownNul}), or {@link #NO_NULLS} when clean. */
    final boolean[][] nul = new boolean[Program.MAX_REGISTERS][];
    /** A register's error rows as read: its own rows ({@link #ownErr}), or {@link #NO_ERRORS} when clean. */
    final int[][] err = new int[Program.MAX_REGISTERS][];
    final boolean[][] ownNul = new boolean[Program.MAX_REGISTERS][];
    final int[][] ownErr = new int[Program.MAX_REGISTERS][];
    /** Byte lengths of string registers (only string loads and SELECT write them). */
    final int[][] len = new int[Program.MAX_REGISTERS][];
    /** Rows whose operation runs: no operand error and no NULL operand. */
    final boolean[] live = new boolean[BATCH];
    final long[] value = new long[BATCH];
    final boolean[] isNull = new boolean[BATCH];
    final int[] error = new int[BATCH];
    final int[] length = new int[BATCH];

    // per thread, one register file for each register count: a file is 17 KB a register, and an
    // evaluation takes one for every 16K rows (remade each time, they were most of a filter's
    // allocations: about 130 MB over TPC-H SF1 lineitem)
    private static final ThreadLocal<Registers[]> OF_THREAD = ThreadLocal.withInitial(
        () -> new Registers[Program.MAX_REGISTERS + 1]);

    /**
     * This thread's register file for programs of {@code used} registers, made on its first use;
     * a thread runs one evaluation at a time, so it is never shared.
     */
    static Registers ofThread(int used) {
      if (used < 0 || used > Program.MAX_REGISTERS) {
        return new Registers(used);
      }
      Registers[] mine = OF_THREAD.get();
      if (mine[used] == null) {
        mine[used] = new Registers(used);
      }
      return mine[used];
    }

    Registers(int used) {
      long[] noValues = new long[BATCH];
      int[] noLengths = new int[BATCH];
      for (int i = 0; i < Program.MAX_REGISTERS; i++) {
        val[i] = i < used ? new long[BATCH] : noValues;
        ownNul[i] = i < used ? new boolean[BATCH] : NO_NULLS;
        ownErr[i] = i < used ? new int[BATCH] : NO_ERRORS;
        nul[i] = ownNul[i];
        err[i] = ownErr[i];
        len[i] = i < used ? new int[BATCH] : noLengths;
      }
    }

    /** Whether register {@code r}'s batch holds no NULL and no error. */
    boolean clean(int r) {
      return nul[r] == NO_NULLS;
    }
  }

  /** The string opcodes run here besides the arithmetic ones: loads, comparisons and LIKE. */
  private static final java.util.Set<Opcode> RUNS = java.util.EnumSet.of(Opcode.LOAD_STR_COL, Opcode.LOAD_STR_CONST,
      Opcode.CMP_S, Opcode.LIKE);

  static {
    RUNS.addAll(Program.ARITHMETIC);
  }

  private CpuBatchEval() {}

  /** Whether every instruction of {@code p} is one this evaluator runs. */
  static boolean supports(Program p) {
    return p.usesOnly(RUNS);
  }

  /** One instruction's operands and destination rows for a batch of {@code m} rows. */
  private record Step(Opcode op, int a, int b, int c, int m, long[] r, boolean[] rn, int[] re, int[] rl, Registers regs) {
    long[] va() {
      return regs.val[a];
    }

    long[] vb() {
      return regs.val[b];
    }

    /** Whether both operands' batches hold no NULL and no error. */
    boolean bothClean() {
      return regs.clean(a) && regs.clean(b);
    }

    /** Rows live for a binary operation: all when both operands are clean, else from {@link #gate}. */
    boolean[] live(boolean clean) {
      if (clean) {
        return ALL_LIVE;
      }
      gate(regs.err[a], regs.err[b], regs.nul[a], regs.nul[b], m, re, rn, regs.live);
      return regs.live;
    }

    /** The rows live for a unary operation over an operand that is not clean ({@link #gate}). */
    boolean[] liveUnary() {
      gate(regs.err[a], regs.err[a], regs.nul[a], regs.nul[a], m, re, rn, regs.live);
      return regs.live;
    }
  }

  /**
   * Rows {@code [from, from + m)} (m at most {@link #BATCH}) of a program {@link #supports} accepts,
   * or with {@code rows} the rows {@code rows[from] .. rows[from + m - 1]} (a selection, {@link ConjunctFilter});
   * the result register's values, nulls, errors and string lengths are left in {@code regs}
   * ({@link Registers#nul} and {@link Registers#err}, which are the shared all-false rows where the
   * result is clean). {@code offsets} are the string columns' offsets addresses, {@code pool} the
   * string constants'.
   */
  static void run(Program p, long[] data, long[] valid, long[] offsets, int[] widths, long pool, int[] rows, int from,
      int m, Registers regs) {
    int[] code = p.code();
    long[] consts = p.constants();
    for (int pc = 0; pc < code.length; pc += Program.WIDTH) {
      Opcode op = CpuEval.OPCODES[code[pc]];
      int d = code[pc + 1];
      int a = code[pc + 2] & 31;
      int b = code[pc + 3] & 31;
      int c = code[pc + 4];
      // results go straight to register d unless d is also an operand (then through scratch rows)
      boolean aliased = d == a || d == b || (op == Opcode.SELECT && d == c);
      Step s = new Step(op, a, b, c, m, aliased ? regs.value : regs.val[d], aliased ? regs.isNull : regs.ownNul[d],
          aliased ? regs.error : regs.ownErr[d], aliased ? regs.length : regs.len[d], regs);
      boolean clean = switch (op) {
        case LOAD_COL -> rows == null
            ? load(data[code[pc + 2]], valid[code[pc + 2]], widths[code[pc + 2]], CpuEval.LOAD_KINDS[c], from, s)
            : loadSelected(data[code[pc + 2]], valid[code[pc + 2]], widths[code[pc + 2]], CpuEval.LOAD_KINDS[c], rows, from, s);
        case LOAD_CONST -> loadConst(consts[code[pc + 2]], code[pc + 3] != 0, s);
        case LOAD_STR_COL -> loadStrings(data[code[pc + 2]], valid[code[pc + 2]], offsets[code[pc + 2]], rows, from, s);
        case LOAD_STR_CONST -> loadStringConst(pool + code[pc + 2], code[pc + 3], s);
        case CMP_S, LIKE -> compareStrings(s);
        case I_ADD, I_SUB, I_MUL -> integerArithmetic(s);
        case CMP_I -> compareIntegers(s);
        case CMP_F -> compareFloats(s);
        case F_ADD, F_SUB, F_MUL, F_DIV -> floatArithmetic(s);
        case I_NEG, SCALE_UP, RANGE_CHECK, PRECISION_CHECK, SCALE_DOWN, I_ABS -> checkedUnary(
            op == Opcode.I_NEG || op == Opcode.I_ABS || op == Opcode.RANGE_CHECK ? 0 : consts[code[pc + 3]], s);
        case F_NEG, I2F, D2F, NOT, FLOOR_DIV, CIVIL, TO_F32 -> unary(
            op == Opcode.D2F || op == Opcode.FLOOR_DIV ? consts[code[pc + 3]] : 0, s);
        case AND, OR -> logical(s);
        case IS_NULL, IS_NOT_NULL -> nullTest(s);
        case SELECT -> select(s);
        default -> throw new IllegalStateException(op + " is not an arithmetic opcode");
      };
      if (aliased) {
        System.arraycopy(s.r, 0, regs.val[d], 0, m);
        System.arraycopy(s.rl, 0, regs.len[d], 0, m);
        if (!clean) {
          System.arraycopy(s.rn, 0, regs.ownNul[d], 0, m);
          System.arraycopy(s.re, 0, regs.ownErr[d], 0, m);
        }
      }
      regs.nul[d] = clean ? NO_NULLS : regs.ownNul[d];
      regs.err[d] = clean ? NO_ERRORS : regs.ownErr[d];
    }
  }

  private static boolean loadConst(long value, boolean isNull, Step s) {
    java.util.Arrays.fill(s.r, 0, s.m, value);
    // a typed NULL string has a length too
    java.util.Arrays.fill(s.rl, 0, s.m, 0);
    if (!isNull) {
      return true;
    }
    java.util.Arrays.fill(s.rn, 0, s.m, true);
    java.util.Arrays.fill(s.re, 0, s.m, 0);
    return false;
  }

  private static boolean loadStrings(long chars, long v, long off, int[] rows, int from, Step s) {
    long[] r = s.r;
    int[] rl = s.rl;
    for (int i = 0; i < s.m; i++) {
      long row = rows == null ? from + i : rows[from + i];
      int start = MemoryUtil.getInt(off + 4 * row);
      r[i] = chars + start;
      rl[i] = MemoryUtil.getInt(off + 4 * row + 4) - start;
    }
    return loadNulls(v, rows, from, s);
  }

  /**
   * A loaded column's NULL rows from its validity {@code valid} (0: none, the register stays clean)
   * for rows {@code from ..} (or {@code rows[from] ..}); whether the register is clean.
   */
  private static boolean loadNulls(long valid, int[] rows, int from, Step s) {
    if (valid == 0) {
      return true;
    }
    for (int i = 0; i < s.m; i++) {
      s.rn[i] = !HostBitmaps.isSet(valid, rows == null ? from + i : rows[from + i]);
      s.re[i] = 0;
    }
    return false;
  }

  private static boolean loadStringConst(long address, int length, Step s) {
    java.util.Arrays.fill(s.r, 0, s.m, address);
    java.util.Arrays.fill(s.rl, 0, s.m, length);
    return true;
  }

  private static boolean compareStrings(Step s) {
    boolean clean = s.bothClean();
    boolean[] live = s.live(clean);
    long[] va = s.va();
    long[] vb = s.vb();
    int[] la = s.regs.len[s.a];
    int[] lb = s.regs.len[s.b];
    long[] r = s.r;
    int c = s.c;
    boolean like = s.op == Opcode.LIKE;
    if (!like && (c == Opcode.Cmp.EQ.ordinal() || c == Opcode.Cmp.NE.ordinal())) {
      // equality needs no order: strings of different lengths differ without a byte read (TPC-H
      // q19's ship instructions and modes, against constants of other lengths on most rows)
      boolean equal = c == Opcode.Cmp.EQ.ordinal();
      for (int i = 0; i < s.m; i++) {
        boolean same = la[i] == lb[i] && CpuEval.compareBytes(va[i], la[i], vb[i], lb[i]) == 0;
        r[i] = live[i] && same == equal ? 1 : 0;
      }
      return clean;
    }
    for (int i = 0; i < s.m; i++) {
      boolean t = live[i] && (like ? CpuEval.like(va[i], la[i], vb[i], lb[i], c)
          : CpuEval.test(c, CpuEval.compareBytes(va[i], la[i], vb[i], lb[i])));
      r[i] = t ? 1 : 0;
    }
    return clean;
  }

  private static boolean compareIntegers(Step s) {
    boolean clean = s.bothClean();
    boolean[] live = s.live(clean);
    long[] va = s.va();
    long[] vb = s.vb();
    long[] r = s.r;
    // the comparison as its answers for less, equal and greater
    boolean onLess = CpuEval.test(s.c, -1);
    boolean onEqual = CpuEval.test(s.c, 0);
    boolean onGreater = CpuEval.test(s.c, 1);
    for (int i = 0; i < s.m; i++) {
      long x = va[i];
      long y = vb[i];
      // & and | rather than && and ||: no branch on the data, which random rows mispredict
      boolean t = (x < y & onLess) | (x == y & onEqual) | (x > y & onGreater);
      r[i] = live[i] & t ? 1 : 0;
    }
    return clean;
  }

  private static boolean compareFloats(Step s) {
    boolean clean = s.bothClean();
    boolean[] live = s.live(clean);
    long[] va = s.va();
    long[] vb = s.vb();
    for (int i = 0; i < s.m; i++) {
      int cmp = CpuSort.compareFloats(Double.longBitsToDouble(va[i]), Double.longBitsToDouble(vb[i]));
      s.r[i] = live[i] & CpuEval.test(s.c, cmp) ? 1 : 0;
    }
    return clean;
  }

  /**
   * Runs {@code loop} over clean operands without bookkeeping; where it reports a failed row (its
   * error was written, the other rows' were not), runs it again over gated rows.
   */
  private static boolean checkedTwice(Step s, boolean unary, java.util.function.ToIntFunction<boolean[]> loop) {
    boolean clean = unary ? s.regs.clean(s.a) : s.bothClean();
    if (clean && loop.applyAsInt(ALL_LIVE) == 0) {
      return true;
    }
    loop.applyAsInt(unary ? s.liveUnary() : s.live(false));
    return false;
  }

  private static boolean integerArithmetic(Step s) {
    return checkedTwice(s, false, live -> {
      long[] va = s.va();
      long[] vb = s.vb();
      long[] r = s.r;
      int[] re = s.re;
      int c = s.c;
      int failed = 0;
      // one loop per operation: a choice inside the loop would be made again for every row
      if (s.op == Opcode.I_ADD) {
        for (int i = 0; i < s.m; i++) {
          long v = va[i] + vb[i];
          boolean overflow = ((va[i] ^ v) & (vb[i] ^ v)) < 0 || !CpuEval.fits(v, c);
          r[i] = checked(live[i], v, overflow, re, i, c);
          failed += live[i] & overflow ? 1 : 0;
        }
      } else if (s.op == Opcode.I_SUB) {
        for (int i = 0; i < s.m; i++) {
          long v = va[i] - vb[i];
          boolean overflow = ((va[i] ^ vb[i]) & (va[i] ^ v)) < 0 || !CpuEval.fits(v, c);
          r[i] = checked(live[i], v, overflow, re, i, c);
          failed += live[i] & overflow ? 1 : 0;
        }
      } else {
        for (int i = 0; i < s.m; i++) {
          long v = va[i] * vb[i];
          boolean overflow = Math.multiplyHigh(va[i], vb[i]) != (v >> 63) || !CpuEval.fits(v, c);
          r[i] = checked(live[i], v, overflow, re, i, c);
          failed += live[i] & overflow ? 1 : 0;
        }
      }
      return failed;
    });
  }

  private static boolean floatArithmetic(Step s) {
    return checkedTwice(s, false, live -> {
      long[] va = s.va();
      long[] vb = s.vb();
      Opcode op = s.op;
      int failed = 0;
      for (int i = 0; i < s.m; i++) {
        long v = 0;
        if (live[i]) {
          double x = Double.longBitsToDouble(va[i]);
          double y = Double.longBitsToDouble(vb[i]);
          if (op == Opcode.F_DIV && y == 0.0) {
            s.re[i] = Opcode.ERR_DIV_ZERO;
            failed++;
          } else {
            double f = op == Opcode.F_ADD ? x + y : op == Opcode.F_SUB ? x - y : op == Opcode.F_MUL ? x * y : x / y;
            v = Double.doubleToRawLongBits(s.c == 1 ? (double) (float) f : f);
          }
        }
        s.r[i] = v;
      }
      return failed;
    });
  }

  private static boolean checkedUnary(long k, Step s) {
    return checkedTwice(s, true, live -> {
      long[] va = s.va();
      Opcode op = s.op;
      int c = s.c;
      int failed = 0;
      for (int i = 0; i < s.m; i++) {
        long v = 0;
        if (live[i]) {
          long x = va[i];
          boolean overflow;
          switch (op) {
            case I_NEG -> {
              v = -x;
              overflow = x == Long.MIN_VALUE || !CpuEval.fits(v, c);
            }
            case SCALE_UP -> {
              v = x * k;
              overflow = Math.multiplyHigh(x, k) != (v >> 63);
            }
            case RANGE_CHECK -> {
              v = x;
              overflow = !CpuEval.fits(x, c);
            }
            case PRECISION_CHECK -> {
              v = x;
              overflow = x == Long.MIN_VALUE || Math.abs(x) >= k;
            }
            case SCALE_DOWN -> {
              v = CpuEval.divideRoundingAway(x, k);
              overflow = false;
            }
            default -> {
              v = x == Long.MIN_VALUE ? 0 : Math.abs(x);
              overflow = x == Long.MIN_VALUE || !CpuEval.fits(v, c);
            }
          }
          if (overflow) {
            s.re[i] = Opcode.overflow(c);
            failed++;
            // the row-at-a-time twin keeps a checked value and drops the others
            v = op == Opcode.RANGE_CHECK || op == Opcode.PRECISION_CHECK || op == Opcode.I_ABS ? v : 0;
          }
        }
        s.r[i] = v;
      }
      return failed;
    });
  }

  private static boolean unary(long k, Step s) {
    boolean clean = s.regs.clean(s.a);
    if (!clean) {
      System.arraycopy(s.regs.err[s.a], 0, s.re, 0, s.m);
      System.arraycopy(s.regs.nul[s.a], 0, s.rn, 0, s.m);
    }
    long[] va = s.va();
    for (int i = 0; i < s.m; i++) {
      long x = va[i];
      s.r[i] = switch (s.op) {
        case F_NEG -> Double.doubleToRawLongBits(-Double.longBitsToDouble(x));
        case I2F -> Double.doubleToRawLongBits((double) x);
        case D2F -> Double.doubleToRawLongBits((double) x / Double.longBitsToDouble(k));
        case NOT -> 1 - x;
        case FLOOR_DIV -> Math.floorDiv(x, k);
        case CIVIL -> CpuEval.civil(x, s.c);
        default -> Double.doubleToRawLongBits((float) Double.longBitsToDouble(x));
      };
    }
    return clean;
  }

  private static boolean logical(Step s) {
    long decisive = s.op == Opcode.AND ? 0 : 1;
    long[] va = s.va();
    long[] vb = s.vb();
    long[] r = s.r;
    if (s.bothClean()) {
      for (int i = 0; i < s.m; i++) {
        r[i] = (va[i] == decisive | vb[i] == decisive) ? decisive : 1 - decisive;
      }
      return true;
    }
    int[] ea = s.regs.err[s.a];
    int[] eb = s.regs.err[s.b];
    boolean[] na = s.regs.nul[s.a];
    boolean[] nb = s.regs.nul[s.b];
    for (int i = 0; i < s.m; i++) {
      boolean decides = (ea[i] == 0 & !na[i] & va[i] == decisive) | (eb[i] == 0 & !nb[i] & vb[i] == decisive);
      int e = decides ? 0 : ea[i] != 0 ? ea[i] : eb[i];
      s.re[i] = e;
      s.rn[i] = !decides & e == 0 & (na[i] | nb[i]);
      r[i] = decides ? decisive : e == 0 & !s.rn[i] ? 1 - decisive : 0;
    }
    return false;
  }

  private static boolean nullTest(Step s) {
    boolean isNullTest = s.op == Opcode.IS_NULL;
    if (s.regs.clean(s.a)) {
      java.util.Arrays.fill(s.r, 0, s.m, isNullTest ? 0 : 1);
      return true;
    }
    boolean[] na = s.regs.nul[s.a];
    System.arraycopy(s.regs.err[s.a], 0, s.re, 0, s.m);
    java.util.Arrays.fill(s.rn, 0, s.m, false);
    for (int i = 0; i < s.m; i++) {
      s.r[i] = na[i] == isNullTest ? 1 : 0;
    }
    return false;
  }

  private static boolean select(Step s) {
    Registers regs = s.regs;
    long[] va = s.va();
    long[] vb = s.vb();
    long[] vc = regs.val[s.c];
    int[] lb = regs.len[s.b];
    int[] lc = regs.len[s.c];
    if (regs.clean(s.a) && regs.clean(s.b) && regs.clean(s.c)) {
      for (int i = 0; i < s.m; i++) {
        boolean pick = va[i] == 1;
        s.r[i] = pick ? vb[i] : vc[i];
        s.rl[i] = pick ? lb[i] : lc[i];
      }
      return true;
    }
    int[] ea = regs.err[s.a];
    boolean[] na = regs.nul[s.a];
    boolean[] nb = regs.nul[s.b];
    boolean[] nc = regs.nul[s.c];
    int[] eb = regs.err[s.b];
    int[] ec = regs.err[s.c];
    for (int i = 0; i < s.m; i++) {
      if (ea[i] != 0) {
        s.re[i] = ea[i];
        s.rn[i] = false;
        s.r[i] = 0;
        s.rl[i] = 0;
      } else {
        boolean pick = !na[i] && va[i] == 1;
        s.r[i] = pick ? vb[i] : vc[i];
        s.rn[i] = pick ? nb[i] : nc[i];
        s.re[i] = pick ? eb[i] : ec[i];
        s.rl[i] = pick ? lb[i] : lc[i];
      }
    }
    return false;
  }

  /**
   * {@code value} for a live row that did not overflow; 0 otherwise, with the overflow recorded
   * ({@link Opcode#overflow} of the instruction's width {@code bits}).
   */
  private static long checked(boolean live, long value, boolean overflow, int[] re, int i, int bits) {
    if (!live) {
      return 0;
    }
    if (overflow) {
      re[i] = Opcode.overflow(bits);
      return 0;
    }
    return value;
  }

  /**
   * Operands with the first error (a's, then b's), else NULL if either is NULL; live where
   * neither, the rows the operation computes.
   */
  private static void gate(int[] ea, int[] eb, boolean[] na, boolean[] nb, int m, int[] re, boolean[] rn, boolean[] live) {
    for (int i = 0; i < m; i++) {
      int e = ea[i] != 0 ? ea[i] : eb[i];
      boolean isNull = e == 0 & (na[i] | nb[i]);
      re[i] = e;
      rn[i] = isNull;
      live[i] = e == 0 & !isNull;
    }
  }

  /** A column's rows; clean where the column has no validity (no NULLs) and no row is too wide. */
  private static boolean load(long data, long valid, int width, Opcode.LoadKind kind, int from, Step s) {
    int m = s.m;
    long[] r = s.r;
    boolean clean = loadNulls(valid, null, from, s);
    switch (kind) {
      case I8 -> {
        for (int i = 0; i < m; i++) {
          r[i] = MemoryUtil.getByte(data + (long) (from + i) * width);
        }
      }
      case I16 -> {
        for (int i = 0; i < m; i++) {
          r[i] = MemoryUtil.getShort(data + (long) (from + i) * width);
        }
      }
      case I32 -> {
        for (int i = 0; i < m; i++) {
          r[i] = MemoryUtil.getInt(data + (long) (from + i) * width);
        }
      }
      case I64, F64 -> {
        for (int i = 0; i < m; i++) {
          r[i] = MemoryUtil.getLong(data + (long) (from + i) * width);
        }
      }
      case F32 -> {
        for (int i = 0; i < m; i++) {
          r[i] = Double.doubleToRawLongBits(Float.intBitsToFloat(MemoryUtil.getInt(data + 4L * (from + i))));
        }
      }
      case BITS -> {
        for (int i = 0; i < m; i++) {
          r[i] = HostBitmaps.isSet(data, from + i) ? 1 : 0;
        }
      }
      case I128 -> clean = loadWide(data, null, from, clean, s);
      default -> throw new IllegalStateException("load kind " + kind);
    }
    return clean;
  }

  /**
   * A 16-byte decimal column's low words, rows {@code from ..} (or {@code rows[from] ..}); a row
   * whose high word is not its low word's sign is an error ({@link Opcode#ERR_WIDE}). Whether the
   * register stays clean.
   */
  private static boolean loadWide(long data, int[] rows, int from, boolean clean, Step s) {
    int m = s.m;
    long[] r = s.r;
    boolean[] rn = s.rn;
    int[] re = s.re;
    boolean wide = false;
    for (int i = 0; i < m; i++) {
      long at = data + 16L * (rows == null ? from + i : rows[from + i]);
      r[i] = MemoryUtil.getLong(at);
      wide |= (clean || !rn[i]) && MemoryUtil.getLong(at + 8) != (r[i] >> 63);
    }
    if (!wide) {
      return clean;
    }
    if (clean) {
      java.util.Arrays.fill(rn, 0, m, false);
      java.util.Arrays.fill(re, 0, m, 0);
    }
    for (int i = 0; i < m; i++) {
      if (!rn[i] && MemoryUtil.getLong(data + 16L * (rows == null ? from + i : rows[from + i]) + 8) != (r[i] >> 63)) {
        re[i] = Opcode.ERR_WIDE;
      }
    }
    return false;
  }

  /**
   * {@link #load} of the rows {@code rows[from] .. rows[from + m - 1]}: a loop for the widths
   * filters read most (4, 8 and 16 bytes), a row's kind chosen per row for the others.
   */
  private static boolean loadSelected(long data, long valid, int width, Opcode.LoadKind kind, int[] rows, int from,
      Step s) {
    int m = s.m;
    long[] r = s.r;
    boolean clean = loadNulls(valid, rows, from, s);
    switch (kind) {
      case I32 -> {
        for (int i = 0; i < m; i++) {
          r[i] = MemoryUtil.getInt(data + (long) rows[from + i] * width);
        }
      }
      case I64, F64 -> {
        for (int i = 0; i < m; i++) {
          r[i] = MemoryUtil.getLong(data + (long) rows[from + i] * width);
        }
      }
      case I128 -> clean = loadWide(data, rows, from, clean, s);
      default -> {
        for (int i = 0; i < m; i++) {
          long row = rows[from + i];
          r[i] = switch (kind) {
            case I8 -> MemoryUtil.getByte(data + row * width);
            case I16 -> MemoryUtil.getShort(data + row * width);
            case F32 -> Double.doubleToRawLongBits(Float.intBitsToFloat(MemoryUtil.getInt(data + 4L * row)));
            case BITS -> HostBitmaps.isSet(data, row) ? 1 : 0;
            default -> throw new IllegalStateException("load kind " + kind);
          };
        }
      }
    }
    return clean;
  }
}
