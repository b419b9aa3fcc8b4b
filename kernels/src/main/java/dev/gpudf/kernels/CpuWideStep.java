package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import java.math.BigInteger;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The instructions of {@link CpuEval#runWide} that meet a value past 64 bits: loads of 16-byte
 * decimals, integer arithmetic, comparison, scaling, conversion from and to double, decimal
 * division and SELECT. Each runs in place of the 64-bit step where an operand is wide or the
 * instruction is declared 128 bits wide (c = 128); every other instruction runs as in 64 bits, as
 * the compiler's typing routes every DECIMAL through these. BigInteger, not hand-made 128-bit words: this path
 * runs only where the 64-bit evaluators could not, and must above all be exact.
 */
final class CpuWideStep {
  /** A DECIMAL(38) value is below 10^38 in magnitude; a result that is not overflows, as in DuckDB. */
  private static final BigInteger LIMIT = BigInteger.TEN.pow(dev.gpudf.columnar.DataType.MAX_DECIMAL_PRECISION);
  private static final BigInteger LOW_WORD = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private CpuWideStep() {}

  /**
   * Runs instruction {@code op} (d = dst, a, b, c as in {@link Opcode}) on row {@code row} when it
   * meets a wide value; false, having done nothing, when the 64-bit step serves.
   */
  static boolean run(Opcode op, int d, int a, int b, int c, long[] consts, CpuEval.Slots in, long row,
      CpuEval.Registers regs) {
    switch (op) {
      case LOAD_COL -> {
        if (CpuEval.LOAD_KINDS[c] != Opcode.LoadKind.I128) {
          return false;
        }
        long at = in.data()[a] + 16 * row;
        regs.val[d] = MemoryUtil.getLong(at);
        regs.hi[d] = MemoryUtil.getLong(at + 8);
        regs.nul[d] = in.valid()[a] != 0 && !HostBitmaps.isSet(in.valid()[a], row);
        regs.err[d] = 0;
        regs.len[d] = 0;
        return true;
      }
      case I_ADD, I_SUB, I_MUL, I_DIV, I_MOD, CMP_I, DEC_DIV -> {
        boolean declared = c == 128 && op != Opcode.CMP_I || op == Opcode.DEC_DIV;
        if (!declared && !wide(regs, a) && !wide(regs, b)) {
          return false;
        }
        if (regs.err[a] != 0 || regs.err[b] != 0) {
          fail(regs, d, regs.err[a] != 0 ? regs.err[a] : regs.err[b]);
        } else if (regs.nul[a] || regs.nul[b]) {
          setNull(regs, d);
        } else {
          binary(op, d, big(regs, a), big(regs, b), c, regs);
        }
        return true;
      }
      case I_NEG, I_ABS, SCALE_UP, SCALE_DOWN, FLOOR_DIV, RANGE_CHECK, PRECISION_CHECK, I2F, D2F, F2DEC -> {
        boolean declared = c == 128
            && (op == Opcode.I_NEG || op == Opcode.I_ABS || op == Opcode.SCALE_UP || op == Opcode.F2DEC);
        if (!declared && !wide(regs, a)) {
          return false;
        }
        if (regs.err[a] != 0) {
          fail(regs, d, regs.err[a]);
        } else if (regs.nul[a]) {
          setNull(regs, d);
        } else {
          unary(op, d, a, consts[b], regs);
        }
        return true;
      }
      case SELECT -> {
        if (regs.err[a] != 0) {
          fail(regs, d, regs.err[a]);
          return true;
        }
        int src = !regs.nul[a] && regs.val[a] == 1 ? b : c;
        regs.val[d] = regs.val[src];
        regs.hi[d] = regs.hi[src];
        regs.len[d] = regs.len[src];
        regs.nul[d] = regs.nul[src];
        regs.err[d] = regs.err[src];
        return true;
      }
      default -> {
        return false;
      }
    }
  }

  private static void binary(Opcode op, int d, BigInteger x, BigInteger y, int c, CpuEval.Registers regs) {
    switch (op) {
      case I_ADD -> set(regs, d, x.add(y));
      case I_SUB -> set(regs, d, x.subtract(y));
      case I_MUL -> set(regs, d, x.multiply(y));
      case I_DIV, I_MOD -> {
        if (y.signum() == 0) {
          fail(regs, d, Opcode.ERR_DIV_ZERO);
        } else {
          // truncated, the remainder with the dividend's sign: as Java's / and % on longs
          set(regs, d, op == Opcode.I_DIV ? x.divide(y) : x.remainder(y));
        }
      }
      case CMP_I -> set(regs, d, BigInteger.valueOf(CpuEval.test(c, x.compareTo(y)) ? 1 : 0));
      default -> {
        // DEC_DIV: x * 10^c / y rounded half away from zero
        if (y.signum() == 0) {
          fail(regs, d, Opcode.ERR_DIV_ZERO);
        } else {
          set(regs, d, divideRoundingAway(x.multiply(BigInteger.TEN.pow(c)), y));
        }
      }
    }
  }

  private static void unary(Opcode op, int d, int a, long k, CpuEval.Registers regs) {
    if (op == Opcode.F2DEC) {
      // as the 64-bit step: the double times 10^scale (constant k), rounded half away from zero
      double x = Double.longBitsToDouble(regs.val[a]) * Double.longBitsToDouble(k);
      if (Double.isFinite(x)) {
        set(regs, d, new java.math.BigDecimal(x).setScale(0, java.math.RoundingMode.HALF_UP).toBigIntegerExact());
      } else {
        fail(regs, d, Opcode.ERR_OVERFLOW);
      }
      return;
    }
    BigInteger x = big(regs, a);
    switch (op) {
      case I_NEG -> set(regs, d, x.negate());
      case I_ABS -> set(regs, d, x.abs());
      case SCALE_UP -> set(regs, d, x.multiply(BigInteger.valueOf(k)));
      case SCALE_DOWN -> set(regs, d, divideRoundingAway(x, BigInteger.valueOf(k)));
      case FLOOR_DIV -> {
        BigInteger[] qr = x.divideAndRemainder(BigInteger.valueOf(k));
        set(regs, d, qr[1].signum() != 0 && qr[1].signum() != Long.signum(k) ? qr[0].subtract(BigInteger.ONE) : qr[0]);
      }
      // a wide value is past 2^63, beyond any range or precision of 18 digits these check
      case RANGE_CHECK, PRECISION_CHECK -> fail(regs, d, Opcode.ERR_OVERFLOW);
      case I2F -> setBits(regs, d, Double.doubleToRawLongBits(x.doubleValue()));
      default -> setBits(regs, d, Double.doubleToRawLongBits(x.doubleValue() / Double.longBitsToDouble(k)));
    }
  }

  private static BigInteger divideRoundingAway(BigInteger x, BigInteger y) {
    BigInteger[] qr = x.divideAndRemainder(y);
    if (qr[1].abs().shiftLeft(1).compareTo(y.abs()) >= 0) {
      return qr[0].add(BigInteger.valueOf(x.signum() * y.signum()));
    }
    return qr[0];
  }

  private static boolean wide(CpuEval.Registers regs, int r) {
    return regs.hi[r] != regs.val[r] >> 63;
  }

  private static BigInteger big(CpuEval.Registers regs, int r) {
    return BigInteger.valueOf(regs.hi[r]).shiftLeft(64).or(BigInteger.valueOf(regs.val[r]).and(LOW_WORD));
  }

  private static void set(CpuEval.Registers regs, int d, BigInteger v) {
    if (v.abs().compareTo(LIMIT) >= 0) {
      fail(regs, d, Opcode.ERR_OVERFLOW);
      return;
    }
    regs.val[d] = v.longValue();
    regs.hi[d] = v.shiftRight(64).longValue();
    regs.nul[d] = false;
    regs.err[d] = 0;
    regs.len[d] = 0;
  }

  private static void setBits(CpuEval.Registers regs, int d, long bits) {
    regs.val[d] = bits;
    regs.hi[d] = bits >> 63;
    regs.nul[d] = false;
    regs.err[d] = 0;
    regs.len[d] = 0;
  }

  private static void setNull(CpuEval.Registers regs, int d) {
    setBits(regs, d, 0);
    regs.nul[d] = true;
  }

  private static void fail(CpuEval.Registers regs, int d, int error) {
    setBits(regs, d, 0);
    regs.err[d] = error;
  }
}
