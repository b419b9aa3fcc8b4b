package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * {@link CpuEval} for arithmetic programs ({@link Program#arithmeticOnly}) and those that also
 * load, compare and LIKE strings ({@link #supports}), a batch of rows at a time: each instruction is decoded once per batch and runs as a loop over the batch, which
 * the JIT compiles into tight code, where the row-at-a-time loop paid a dispatch per instruction
 * and row. The semantics are {@link CpuEval}'s, operation for operation (CpuBatchEvalTest compares
 * the two); as there, an operation's value is 0 where its result is NULL or an error.
 */
final class CpuBatchEval {
  /** Rows per batch: each register holds this many values. */
  static final int BATCH = 1024;

  /**
   * A batch's register file and scratch rows; one per thread. Operand fields that name a column
   * slot or a constant index the register file too (masked, as in {@link CpuEval}), so registers
   * past the program's all share one row of zeros, never written.
   */
  static final class Registers {
    final long[][] val = new long[Program.MAX_REGISTERS][];
    final boolean[][] nul = new boolean[Program.MAX_REGISTERS][];
    final int[][] err = new int[Program.MAX_REGISTERS][];
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
      boolean[] noNulls = new boolean[BATCH];
      int[] noErrors = new int[BATCH];
      int[] noLengths = new int[BATCH];
      for (int i = 0; i < Program.MAX_REGISTERS; i++) {
        val[i] = i < used ? new long[BATCH] : noValues;
        nul[i] = i < used ? new boolean[BATCH] : noNulls;
        err[i] = i < used ? new int[BATCH] : noErrors;
        len[i] = i < used ? new int[BATCH] : noLengths;
      }
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

  /**
   * Rows {@code [from, from + m)} (m at most {@link #BATCH}) of a program {@link #supports} accepts;
   * the result register's values, nulls, errors and string lengths are left in {@code regs}.
   * {@code offsets} are the string columns' offsets addresses, {@code pool} the string constants'.
   */
  static void run(Program p, long[] data, long[] valid, long[] offsets, int[] widths, long pool, int from, int m,
      Registers regs) {
    int[] code = p.code();
    long[] consts = p.constants();
    boolean[] live = regs.live;
    for (int pc = 0; pc < code.length; pc += Program.WIDTH) {
      Opcode op = CpuEval.OPCODES[code[pc]];
      int d = code[pc + 1];
      int a = code[pc + 2] & 31;
      int b = code[pc + 3] & 31;
      int c = code[pc + 4];
      // results go straight to register d unless d is also an operand (then through scratch rows)
      boolean aliased = d == a || d == b || (op == Opcode.SELECT && d == c);
      long[] r = aliased ? regs.value : regs.val[d];
      boolean[] rn = aliased ? regs.isNull : regs.nul[d];
      int[] re = aliased ? regs.error : regs.err[d];
      int[] rl = aliased ? regs.length : regs.len[d];
      long[] va = regs.val[a];
      long[] vb = regs.val[b];
      boolean[] na = regs.nul[a];
      int[] ea = regs.err[a];
      switch (op) {
        case LOAD_COL -> load(data[code[pc + 2]], valid[code[pc + 2]], widths[code[pc + 2]], CpuEval.LOAD_KINDS[c], from, m, r, rn, re);
        case LOAD_CONST -> {
          java.util.Arrays.fill(r, 0, m, consts[code[pc + 2]]);
          java.util.Arrays.fill(rn, 0, m, code[pc + 3] != 0);
          java.util.Arrays.fill(re, 0, m, 0);
          // a typed NULL string has a length too
          java.util.Arrays.fill(rl, 0, m, 0);
        }
        case LOAD_STR_COL -> {
          long v = valid[code[pc + 2]];
          long off = offsets[code[pc + 2]];
          long chars = data[code[pc + 2]];
          for (int i = 0; i < m; i++) {
            long row = from + i;
            rn[i] = v != 0 && !HostBitmaps.isSet(v, row);
            re[i] = 0;
            int start = MemoryUtil.getInt(off + 4 * row);
            r[i] = chars + start;
            rl[i] = MemoryUtil.getInt(off + 4 * row + 4) - start;
          }
        }
        case LOAD_STR_CONST -> {
          java.util.Arrays.fill(r, 0, m, pool + code[pc + 2]);
          java.util.Arrays.fill(rl, 0, m, code[pc + 3]);
          java.util.Arrays.fill(rn, 0, m, false);
          java.util.Arrays.fill(re, 0, m, 0);
        }
        case CMP_S, LIKE -> {
          gate(ea, regs.err[b], na, regs.nul[b], m, re, rn, live);
          int[] la = regs.len[a];
          int[] lb = regs.len[b];
          for (int i = 0; i < m; i++) {
            boolean t = live[i] && (op == Opcode.CMP_S ? CpuEval.test(c, CpuEval.compareBytes(va[i], la[i], vb[i], lb[i]))
                : CpuEval.like(va[i], la[i], vb[i], lb[i], c));
            r[i] = t ? 1 : 0;
          }
        }
        case I_ADD, I_SUB, I_MUL -> {
          gate(ea, regs.err[b], na, regs.nul[b], m, re, rn, live);
          // one loop per operation: a choice inside the loop would be made again for every row
          if (op == Opcode.I_ADD) {
            for (int i = 0; i < m; i++) {
              long s = va[i] + vb[i];
              r[i] = checked(live[i], s, ((va[i] ^ s) & (vb[i] ^ s)) < 0 || !CpuEval.fits(s, c), re, i);
            }
          } else if (op == Opcode.I_SUB) {
            for (int i = 0; i < m; i++) {
              long s = va[i] - vb[i];
              r[i] = checked(live[i], s, ((va[i] ^ vb[i]) & (va[i] ^ s)) < 0 || !CpuEval.fits(s, c), re, i);
            }
          } else {
            for (int i = 0; i < m; i++) {
              long s = va[i] * vb[i];
              r[i] = checked(live[i], s, Math.multiplyHigh(va[i], vb[i]) != (s >> 63) || !CpuEval.fits(s, c), re, i);
            }
          }
        }
        case CMP_I -> {
          gate(ea, regs.err[b], na, regs.nul[b], m, re, rn, live);
          // the comparison as its answers for less, equal and greater
          boolean onLess = CpuEval.test(c, -1);
          boolean onEqual = CpuEval.test(c, 0);
          boolean onGreater = CpuEval.test(c, 1);
          for (int i = 0; i < m; i++) {
            long x = va[i];
            long y = vb[i];
            // & and | rather than && and ||: no branch on the data, which random rows mispredict
            boolean t = (x < y & onLess) | (x == y & onEqual) | (x > y & onGreater);
            r[i] = live[i] & t ? 1 : 0;
          }
        }
        case CMP_F -> {
          gate(ea, regs.err[b], na, regs.nul[b], m, re, rn, live);
          for (int i = 0; i < m; i++) {
            int cmp = CpuSort.compareFloats(Double.longBitsToDouble(va[i]), Double.longBitsToDouble(vb[i]));
            r[i] = live[i] & CpuEval.test(c, cmp) ? 1 : 0;
          }
        }
        case F_ADD, F_SUB, F_MUL, F_DIV -> {
          gate(ea, regs.err[b], na, regs.nul[b], m, re, rn, live);
          for (int i = 0; i < m; i++) {
            long v = 0;
            if (live[i]) {
              double x = Double.longBitsToDouble(va[i]);
              double y = Double.longBitsToDouble(vb[i]);
              if (op == Opcode.F_DIV && y == 0.0) {
                re[i] = Opcode.ERR_DIV_ZERO;
              } else {
                double f = op == Opcode.F_ADD ? x + y : op == Opcode.F_SUB ? x - y : op == Opcode.F_MUL ? x * y : x / y;
                v = Double.doubleToRawLongBits(c == 1 ? (double) (float) f : f);
              }
            }
            r[i] = v;
          }
        }
        case I_NEG, SCALE_UP, RANGE_CHECK, PRECISION_CHECK, SCALE_DOWN, I_ABS -> {
          gate(ea, ea, na, na, m, re, rn, live);
          long k = op == Opcode.I_NEG || op == Opcode.I_ABS || op == Opcode.RANGE_CHECK ? 0 : consts[code[pc + 3]];
          for (int i = 0; i < m; i++) {
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
                re[i] = Opcode.ERR_OVERFLOW;
                // the row-at-a-time twin keeps a checked value and drops the others
                v = op == Opcode.RANGE_CHECK || op == Opcode.PRECISION_CHECK || op == Opcode.I_ABS ? v : 0;
              }
            }
            r[i] = v;
          }
        }
        case F_NEG, I2F, D2F, NOT, FLOOR_DIV, CIVIL, TO_F32 -> {
          System.arraycopy(ea, 0, re, 0, m);
          System.arraycopy(na, 0, rn, 0, m);
          long k = op == Opcode.D2F || op == Opcode.FLOOR_DIV ? consts[code[pc + 3]] : 0;
          for (int i = 0; i < m; i++) {
            long x = va[i];
            r[i] = switch (op) {
              case F_NEG -> Double.doubleToRawLongBits(-Double.longBitsToDouble(x));
              case I2F -> Double.doubleToRawLongBits((double) x);
              case D2F -> Double.doubleToRawLongBits((double) x / Double.longBitsToDouble(k));
              case NOT -> 1 - x;
              case FLOOR_DIV -> Math.floorDiv(x, k);
              case CIVIL -> CpuEval.civil(x, c);
              default -> Double.doubleToRawLongBits((float) Double.longBitsToDouble(x));
            };
          }
        }
        case AND, OR -> {
          long decisive = op == Opcode.AND ? 0 : 1;
          int[] eb = regs.err[b];
          boolean[] nb = regs.nul[b];
          for (int i = 0; i < m; i++) {
            boolean decides = (ea[i] == 0 & !na[i] & va[i] == decisive) | (eb[i] == 0 & !nb[i] & vb[i] == decisive);
            int e = decides ? 0 : ea[i] != 0 ? ea[i] : eb[i];
            re[i] = e;
            rn[i] = !decides & e == 0 & (na[i] | nb[i]);
            r[i] = decides ? decisive : e == 0 & !rn[i] ? 1 - decisive : 0;
          }
        }
        case IS_NULL, IS_NOT_NULL -> {
          System.arraycopy(ea, 0, re, 0, m);
          java.util.Arrays.fill(rn, 0, m, false);
          for (int i = 0; i < m; i++) {
            r[i] = na[i] == (op == Opcode.IS_NULL) ? 1 : 0;
          }
        }
        case SELECT -> {
          long[] vc = regs.val[c];
          boolean[] nb = regs.nul[b];
          boolean[] nc = regs.nul[c];
          int[] eb = regs.err[b];
          int[] ec = regs.err[c];
          int[] lb = regs.len[b];
          int[] lc = regs.len[c];
          for (int i = 0; i < m; i++) {
            if (ea[i] != 0) {
              re[i] = ea[i];
              rn[i] = false;
              r[i] = 0;
              rl[i] = 0;
            } else {
              boolean pick = !na[i] && va[i] == 1;
              r[i] = pick ? vb[i] : vc[i];
              rn[i] = pick ? nb[i] : nc[i];
              re[i] = pick ? eb[i] : ec[i];
              rl[i] = pick ? lb[i] : lc[i];
            }
          }
        }
        default -> throw new IllegalStateException(op + " is not an arithmetic opcode");
      }
      if (aliased) {
        System.arraycopy(r, 0, regs.val[d], 0, m);
        System.arraycopy(rn, 0, regs.nul[d], 0, m);
        System.arraycopy(re, 0, regs.err[d], 0, m);
        System.arraycopy(rl, 0, regs.len[d], 0, m);
      }
    }
  }

  /** {@code value} for a live row that did not overflow; 0 otherwise, with the overflow recorded. */
  private static long checked(boolean live, long value, boolean overflow, int[] re, int i) {
    if (!live) {
      return 0;
    }
    if (overflow) {
      re[i] = Opcode.ERR_OVERFLOW;
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

  private static void load(long data, long valid, int width, Opcode.LoadKind kind, int from, int m, long[] r, boolean[] rn,
      int[] re) {
    for (int i = 0; i < m; i++) {
      long row = from + i;
      rn[i] = valid != 0 && !HostBitmaps.isSet(valid, row);
      re[i] = 0;
    }
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
      case I128 -> {
        for (int i = 0; i < m; i++) {
          long at = data + 16L * (from + i);
          r[i] = MemoryUtil.getLong(at);
          if (!rn[i] && MemoryUtil.getLong(at + 8) != (r[i] >> 63)) {
            re[i] = Opcode.ERR_WIDE;
          }
        }
      }
      default -> throw new IllegalStateException("load kind " + kind);
    }
  }
}
