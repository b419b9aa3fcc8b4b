package dev.gpudf.kernels;

import dev.gpudf.columnar.HostBitmaps;
import dev.gpudf.columnar.HostColumn;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The CPU twin of {@code expr_eval_kernel}: runs a {@link Program} row by row, in parallel
 * chunks, with the same registers, null bits, error codes and store rules; programs of
 * arithmetic, string loads, comparisons and LIKE a batch of rows at a time ({@link CpuBatchEval}).
 */
final class CpuEval {
  private static final int CHUNK = 1 << 14;

  private CpuEval() {}

  /**
   * Output of one evaluation: value bits per row (for strings, the address of the bytes), byte
   * lengths (a string result's; null for others), null flags, the first failing row (row << 8 |
   * error code), and the high words of 128-bit values ({@link #runWide}; null for others).
   */
  record Rows(long[] values, int[] lengths, boolean[] nulls, long firstError, long[] high) {
    Rows(long[] values, int[] lengths, boolean[] nulls, long firstError) {
      this(values, lengths, nulls, firstError, null);
    }
  }

  // values() copies its array on every call: once per row and load was most of a profile
  static final Opcode[] OPCODES = Opcode.values();
  private static final boolean LITTLE_ENDIAN = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN;
  static final Opcode.LoadKind[] LOAD_KINDS = Opcode.LoadKind.values();
  private static final Opcode.MathFn[] MATH_FNS = Opcode.MathFn.values();
  private static final Opcode.ParseKind[] PARSE_KINDS = Opcode.ParseKind.values();
  private static final Opcode.Cmp[] CMPS = Opcode.Cmp.values();

  /** Runs {@code p}; {@code pool} is the native address of a copy of {@link Program#strings()}. */
  static Rows run(Program p, List<HostColumn> slots, int n, long pool) {
    return run(p, slots, n, pool, CpuBatchEval.supports(p));
  }

  /** A program's column slots as the evaluators read them: buffer addresses (0: none) and value widths. */
  record Inputs(long[] data, long[] valid, long[] offsets, int[] widths) {
    static Inputs of(List<HostColumn> slots) {
      long[] data = new long[slots.size()];
      long[] valid = new long[slots.size()];
      long[] offsets = new long[slots.size()];
      for (int s = 0; s < slots.size(); s++) {
        HostColumn c = slots.get(s);
        data[s] = c.vector().getDataBuffer().memoryAddress();
        valid[s] = c.nullCount() > 0 ? c.vector().getValidityBuffer().memoryAddress() : 0;
        offsets[s] = c.type().id() == dev.gpudf.columnar.TypeId.STRING ? c.vector().getOffsetBuffer().memoryAddress() : 0;
      }
      // Arrow keeps every DECIMAL in 16 bytes: a DECIMAL64 load (I64) reads the low word
      int[] widths = slots.stream().mapToInt(c -> c.type().id() == dev.gpudf.columnar.TypeId.BOOL
          || c.type().id() == dev.gpudf.columnar.TypeId.STRING ? 0 : CpuGather.hostWidth(c.vector())).toArray();
      return new Inputs(data, valid, offsets, widths);
    }
  }

  /** {@link #run(Program, List, int, long)}, a batch of rows at a time ({@link CpuBatchEval}) when {@code batched}. */
  static Rows run(Program p, List<HostColumn> slots, int n, long pool, boolean batched) {
    Inputs in = Inputs.of(slots);
    long[] data = in.data();
    long[] valid = in.valid();
    long[] offsets = in.offsets();
    int[] widths = in.widths();
    long[] values = new long[n];
    // byte lengths only for a string result: for any other they were 4 bytes a row written and never read
    int[] lengths = p.result().id() == dev.gpudf.columnar.TypeId.STRING ? new int[n] : null;
    boolean[] nulls = new boolean[n];
    long[] firstError = new long[(n + CHUNK - 1) / CHUNK];
    if (batched) {
      IntStream.range(0, firstError.length).parallel().forEach(ch -> {
        CpuBatchEval.Registers regs = CpuBatchEval.Registers.ofThread(p.registers());
        long first = Long.MAX_VALUE;
        int end = Math.min(n, (ch + 1) * CHUNK);
        for (int from = ch * CHUNK; from < end; from += CpuBatchEval.BATCH) {
          int m = Math.min(CpuBatchEval.BATCH, end - from);
          CpuBatchEval.run(p, data, valid, offsets, widths, pool, null, from, m, regs);
          int res = p.resultRegister();
          long[] v = regs.val[res];
          boolean[] isNull = regs.nul[res];
          int[] error = regs.err[res];
          int[] length = regs.len[res];
          if (regs.clean(res)) {
            // nulls[] starts all false
            System.arraycopy(v, 0, values, from, m);
            if (lengths != null) {
              System.arraycopy(length, 0, lengths, from, m);
            }
            continue;
          }
          for (int i = 0; i < m; i++) {
            if (error[i] != 0) {
              first = Math.min(first, ((long) (from + i) << 8) | error[i]);
              nulls[from + i] = true;
            } else {
              nulls[from + i] = isNull[i];
              values[from + i] = v[i];
              if (lengths != null) {
                lengths[from + i] = length[i];
              }
            }
          }
        }
        firstError[ch] = first;
      });
      return new Rows(values, lengths, nulls, IntStream.range(0, firstError.length).mapToLong(i -> firstError[i]).min()
          .orElse(Long.MAX_VALUE));
    }
    return rowByRow(p, in, n, pool, values, lengths, nulls, null);
  }

  /**
   * {@link #run(Program, List, int, long)} exactly in 128 bits: integer and decimal registers hold
   * a high word too, so a DECIMAL of up to 38 digits is computed where the 64-bit evaluators
   * stopped at {@link Opcode#ERR_WIDE}. A result past 38 digits is an overflow. Row by row and
   * through BigInteger where a value is wide: the rare case, kept simple and exact.
   */
  static Rows runWide(Program p, List<HostColumn> slots, int n, long pool) {
    return rowByRow(p, Inputs.of(slots), n, pool, new long[n],
        p.result().id() == dev.gpudf.columnar.TypeId.STRING ? new int[n] : null, new boolean[n], new long[n]);
  }

  private static Rows rowByRow(Program p, Inputs in, int n, long pool, long[] values, int[] lengths, boolean[] nulls,
      long[] high) {
    long[] firstError = new long[(n + CHUNK - 1) / CHUNK];
    Slots slots = new Slots(in.data(), in.valid(), in.offsets(), in.widths(), pool);
    IntStream.range(0, firstError.length).parallel().forEach(ch -> {
      Registers regs = new Registers(high != null);
      long first = Long.MAX_VALUE;
      for (int row = ch * CHUNK; row < Math.min(n, (ch + 1) * CHUNK); row++) {
        run(p, slots, row, regs);
        int r = p.resultRegister();
        if (regs.err[r] != 0) {
          first = Math.min(first, ((long) row << 8) | regs.err[r]);
          nulls[row] = true;
        } else {
          nulls[row] = regs.nul[r];
          values[row] = regs.val[r];
          if (lengths != null) {
            lengths[row] = regs.len[r];
          }
          if (high != null) {
            high[row] = regs.hi[r];
          }
        }
      }
      firstError[ch] = first;
    });
    return new Rows(values, lengths, nulls,
        IntStream.range(0, firstError.length).mapToLong(i -> firstError[i]).min().orElse(Long.MAX_VALUE), high);
  }

  /** The twin of {@code round_away} in {@code expr.cu}. */
  private static double roundAway(double x, double scale) {
    double m = Math.abs(x) * scale;
    if (!(m < 4503599627370496.0)) {
      return x;
    }
    return Math.copySign(Math.floor(m + 0.5) / scale, x);
  }

  /**
   * One row's register file: value bits, byte length (strings), null flag, error code, and in a
   * 128-bit run ({@link #runWide}) each value's high word (the sign of val where it fits 64 bits).
   */
  static final class Registers {
    final long[] val = new long[Program.MAX_REGISTERS];
    final int[] len = new int[Program.MAX_REGISTERS];
    final boolean[] nul = new boolean[Program.MAX_REGISTERS];
    final int[] err = new int[Program.MAX_REGISTERS];
    final long[] hi;

    Registers(boolean wide) {
      hi = wide ? new long[Program.MAX_REGISTERS] : null;
    }
  }

  /** Native addresses of the input columns' buffers and of the string pool. */
  record Slots(long[] data, long[] valid, long[] offsets, int[] widths, long pool) {}

  private static void run(Program p, Slots in, long row, Registers regs) {
    long[] data = in.data;
    long[] valid = in.valid;
    int[] widths = in.widths;
    long[] val = regs.val;
    int[] len = regs.len;
    boolean[] nul = regs.nul;
    int[] err = regs.err;
    int[] code = p.code();
    long[] consts = p.constants();
    long[] high = regs.hi;
    Opcode[] ops = OPCODES;
    for (int pc = 0; pc < code.length; pc += Program.WIDTH) {
      Opcode op = ops[code[pc]];
      int d = code[pc + 1];
      int a = code[pc + 2];
      int b = code[pc + 3];
      int c = code[pc + 4];
      if (high != null && CpuWideStep.run(op, d, a, b, c, consts, in, row, regs)) {
        continue;
      }
      boolean na = nul[a & 31];
      boolean nb = nul[b & 31];
      int ea = err[a & 31];
      int eb = err[b & 31];
      long r = 0;
      int rl = 0;
      boolean rn = false;
      int re = 0;
      switch (op) {
        case LOAD_STR_COL -> {
          rn = valid[a] != 0 && !HostBitmaps.isSet(valid[a], row);
          int start = MemoryUtil.getInt(in.offsets[a] + 4 * row);
          r = data[a] + start;
          rl = MemoryUtil.getInt(in.offsets[a] + 4 * row + 4) - start;
        }
        case LOAD_STR_CONST -> {
          r = in.pool + a;
          rl = b;
        }
        case CMP_S, LIKE -> {
          if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else if (op == Opcode.CMP_S) {
            r = test(c, compareBytes(val[a], len[a & 31], val[b], len[b & 31])) ? 1 : 0;
          } else {
            r = like(val[a], len[a & 31], val[b], len[b & 31], c) ? 1 : 0;
          }
        }
        case SUBSTRING -> {
          boolean hasLength = c >= 0;
          int ec = hasLength ? err[c] : 0;
          if (ea != 0 || eb != 0 || ec != 0) {
            re = ea != 0 ? ea : eb != 0 ? eb : ec;
          } else if (na || nb || (hasLength && nul[c])) {
            rn = true;
          } else if (hasLength && val[c] < 0) {
            re = Opcode.ERR_NEGATIVE_LENGTH;
          } else {
            long from = Math.max(1, val[b]);
            long to = hasLength ? Math.max(from, val[b] + val[c]) : Long.MAX_VALUE;
            long[] range = charRange(val[a], len[a], from, to);
            r = val[a] + range[0];
            rl = (int) (range[1] - range[0]);
          }
        }
        case TRIM -> {
          re = ea;
          rn = na;
          int lo = 0;
          int hi = len[a & 31];
          while (c != 2 && lo < hi && MemoryUtil.getByte(val[a] + lo) == ' ') {
            lo++;
          }
          while (c != 1 && hi > lo && MemoryUtil.getByte(val[a] + hi - 1) == ' ') {
            hi--;
          }
          r = val[a] + lo;
          rl = hi - lo;
        }
        case POSITION -> {
          if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else {
            r = position(val[a], len[a], val[b], len[b]);
          }
        }
        case CHAR_LENGTH -> {
          re = ea;
          rn = na;
          int count = 0;
          for (int i = 0; i < len[a & 31]; i++) {
            count += (MemoryUtil.getByte(val[a] + i) & 0xC0) != 0x80 ? 1 : 0;
          }
          r = count;
        }
        case LOAD_COL -> {
          rn = valid[a] != 0 && !HostBitmaps.isSet(valid[a], row);
          long addr = data[a] + row * widths[a];
          Opcode.LoadKind kind = LOAD_KINDS[c];
          r = switch (kind) {
            case I8 -> MemoryUtil.getByte(addr);
            case I16 -> MemoryUtil.getShort(addr);
            case I32 -> MemoryUtil.getInt(addr);
            case I64, F64 -> MemoryUtil.getLong(addr);
            case F32 -> Double.doubleToRawLongBits(Float.intBitsToFloat(MemoryUtil.getInt(data[a] + 4 * row)));
            case BITS -> HostBitmaps.isSet(data[a], row) ? 1 : 0;
            case I128 -> MemoryUtil.getLong(data[a] + 16 * row);
          };
          if (kind == Opcode.LoadKind.I128 && !rn
              && MemoryUtil.getLong(data[a] + 16 * row + 8) != (r >> 63)) {
            re = Opcode.ERR_WIDE;
          }
        }
        case LOAD_CONST -> {
          r = consts[a];
          rn = b != 0;
        }
        case I_ADD, I_SUB, I_MUL, I_DIV, I_MOD, F_ADD, F_SUB, F_MUL, F_DIV, F_MOD, CMP_I, CMP_F -> {
          if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else {
            long x = val[a];
            long y = val[b];
            try {
              switch (op) {
                case I_ADD -> r = fit(Math.addExact(x, y), c);
                case I_SUB -> r = fit(Math.subtractExact(x, y), c);
                case I_MUL -> r = fit(Math.multiplyExact(x, y), c);
                case I_DIV -> {
                  if (y == 0) {
                    re = Opcode.ERR_DIV_ZERO;
                  } else if (x == Long.MIN_VALUE && y == -1) {
                    re = Opcode.ERR_OVERFLOW;
                  } else {
                    r = fit(x / y, c);
                  }
                }
                case I_MOD -> {
                  if (y == 0) {
                    re = Opcode.ERR_DIV_ZERO;
                  } else {
                    r = x % y;
                  }
                }
                case CMP_I -> r = test(c, Long.compare(x, y)) ? 1 : 0;
                case CMP_F -> r = test(c, CpuSort.compareFloats(Double.longBitsToDouble(x), Double.longBitsToDouble(y))) ? 1 : 0;
                default -> {
                  double fx = Double.longBitsToDouble(x);
                  double fy = Double.longBitsToDouble(y);
                  if ((op == Opcode.F_DIV || op == Opcode.F_MOD) && fy == 0.0) {
                    re = Opcode.ERR_DIV_ZERO;
                  } else {
                    double f = switch (op) {
                      case F_ADD -> fx + fy;
                      case F_SUB -> fx - fy;
                      case F_MUL -> fx * fy;
                      case F_DIV -> fx / fy;
                      default -> fx % fy;
                    };
                    r = Double.doubleToRawLongBits(c == 1 ? (double) (float) f : f);
                  }
                }
              }
            } catch (ArithmeticException overflow) {
              re = Opcode.overflow(c);
            }
          }
        }
        case I_NEG -> {
          if (ea != 0) {
            re = ea;
          } else if (na) {
            rn = true;
          } else if (val[a] == Long.MIN_VALUE || !fits(-val[a], c)) {
            re = Opcode.overflow(c);
          } else {
            r = -val[a];
          }
        }
        case F_NEG -> {
          re = ea;
          rn = na;
          r = Double.doubleToRawLongBits(-Double.longBitsToDouble(val[a]));
        }
        case I2F -> {
          re = ea;
          rn = na;
          r = Double.doubleToRawLongBits((double) val[a]);
        }
        case SCALE_UP -> {
          if (ea != 0) {
            re = ea;
          } else if (na) {
            rn = true;
          } else {
            try {
              r = Math.multiplyExact(val[a], consts[b]);
            } catch (ArithmeticException overflow) {
              re = Opcode.overflow(c);
            }
          }
        }
        case D2F -> {
          re = ea;
          rn = na;
          r = Double.doubleToRawLongBits((double) val[a] / Double.longBitsToDouble(consts[b]));
        }
        case AND, OR -> {
          long decisive = op == Opcode.AND ? 0 : 1;
          boolean aDecides = ea == 0 && !na && val[a] == decisive;
          boolean bDecides = eb == 0 && !nb && val[b] == decisive;
          if (aDecides || bDecides) {
            r = decisive;
          } else if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else {
            r = 1 - decisive;
          }
        }
        case NOT -> {
          re = ea;
          rn = na;
          r = 1 - val[a];
        }
        case IS_NULL -> {
          re = ea;
          r = na ? 1 : 0;
        }
        case IS_NOT_NULL -> {
          re = ea;
          r = na ? 0 : 1;
        }
        case FLOOR_DIV -> {
          re = ea;
          rn = na;
          r = Math.floorDiv(val[a], consts[b]);
        }
        case CIVIL -> {
          re = ea;
          rn = na;
          r = civil(val[a], c);
        }
        case PARSE -> {
          if (ea != 0) {
            re = ea;
          } else if (na) {
            rn = true;
          } else {
            long[] out = new long[1];
            re = parse(val[a], len[a & 31], c, c == Opcode.ParseKind.DECIMAL64.ordinal() ? consts[b] : 0,
                c == Opcode.ParseKind.DECIMAL64.ordinal() ? consts[b + 1] : 0, out);
            r = out[0];
          }
        }
        case ADD_MONTHS -> {
          if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else if (Math.abs(val[b]) > 12_000_000L) {
            re = Opcode.ERR_OVERFLOW;
          } else {
            r = addMonths(val[a], val[b]);
            if (r != (int) r) {
              re = Opcode.ERR_OVERFLOW;
            }
          }
        }
        case RANGE_CHECK, PRECISION_CHECK, SCALE_DOWN, I_ABS -> {
          if (ea != 0) {
            re = ea;
          } else if (na) {
            rn = true;
          } else {
            long x = val[a];
            switch (op) {
              case RANGE_CHECK -> {
                r = x;
                re = fits(x, c) ? 0 : Opcode.ERR_OVERFLOW;
              }
              case PRECISION_CHECK -> {
                r = x;
                re = x != Long.MIN_VALUE && Math.abs(x) < consts[b] ? 0 : Opcode.ERR_OVERFLOW;
              }
              case SCALE_DOWN -> r = divideRoundingAway(x, consts[b]);
              default -> {
                r = x == Long.MIN_VALUE ? 0 : Math.abs(x);
                re = x != Long.MIN_VALUE && fits(r, c) ? 0 : Opcode.overflow(c);
              }
            }
          }
        }
        case F2I, F2DEC -> {
          if (ea != 0) {
            re = ea;
          } else if (na) {
            rn = true;
          } else {
            double x = Double.longBitsToDouble(val[a]);
            double rounded = op == Opcode.F2I ? Math.rint(x) : roundHalfAway(x * Double.longBitsToDouble(consts[b]));
            if (Double.isNaN(rounded) || rounded < -0x1p63 || rounded >= 0x1p63) {
              // a finite value for a DECIMAL of more than 18 digits may fit 128 bits
              re = Double.isFinite(rounded) ? Opcode.overflow(c) : Opcode.ERR_OVERFLOW;
            } else {
              r = (long) rounded;
            }
          }
        }
        case DEC_DIV -> {
          if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else if (val[b] == 0) {
            re = Opcode.ERR_DIV_ZERO;
          } else {
            java.math.BigInteger num = java.math.BigInteger.valueOf(val[a]).multiply(java.math.BigInteger.TEN.pow(c));
            java.math.BigInteger[] qr = num.divideAndRemainder(java.math.BigInteger.valueOf(val[b]));
            java.math.BigInteger q = qr[0];
            if (qr[1].abs().shiftLeft(1).compareTo(java.math.BigInteger.valueOf(val[b]).abs()) >= 0) {
              q = q.add(java.math.BigInteger.valueOf(num.signum() * Long.signum(val[b])));
            }
            if (q.bitLength() > 63) {
              re = Opcode.ERR_WIDE;
            } else {
              r = q.longValue();
            }
          }
        }
        case TO_F32 -> {
          re = ea;
          rn = na;
          r = Double.doubleToRawLongBits((float) Double.longBitsToDouble(val[a]));
        }
        case F_MATH -> {
          if (ea != 0 || eb != 0) {
            re = ea != 0 ? ea : eb;
          } else if (na || nb) {
            rn = true;
          } else {
            double x = Double.longBitsToDouble(val[a]);
            double y = Double.longBitsToDouble(val[b]);
            Opcode.MathFn fn = MATH_FNS[c];
            if ((fn == Opcode.MathFn.SQRT && x < 0) || (fn == Opcode.MathFn.LN && x <= 0)) {
              re = Opcode.ERR_DOMAIN;
            } else {
              r = Double.doubleToRawLongBits(switch (fn) {
                case SQRT -> Math.sqrt(x);
                case LN -> Math.log(x);
                case EXP -> Math.exp(x);
                case POWER -> Math.pow(x, y);
                case FLOOR -> Math.floor(x);
                case CEIL -> Math.ceil(x);
                case ABS -> Math.abs(x);
                case ROUND -> roundAway(x, y);
              });
            }
          }
        }
        case SELECT -> {
          if (ea != 0) {
            re = ea;
          } else {
            int src = !na && val[a] == 1 ? b : c;
            r = val[src];
            rl = len[src];
            rn = nul[src];
            re = err[src];
          }
        }
      }
      val[d] = r;
      len[d] = rl;
      nul[d] = rn;
      err[d] = re;
      if (high != null) {
        high[d] = r >> 63;
      }
    }
  }

  /**
   * Year, month or day of a day number (days since 1970-01-01, proleptic Gregorian): counted in
   * 400-year eras of 146097 days starting on March 1, so leap days fall at the end of a year.
   * The kernel computes the same.
   */
  static long civil(long days, int field) {
    long z = days + 719_468;
    long era = Math.floorDiv(z, 146_097);
    long doe = z - era * 146_097;
    long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    long day = doy - (153 * mp + 2) / 5 + 1;
    long month = mp < 10 ? mp + 3 : mp - 9;
    long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    return field == 0 ? year : field == 1 ? month : day;
  }

  private static final double[] POWERS_OF_TEN = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
    1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

  private static boolean lowerEquals(byte[] s, int from, int n, String word) {
    if (n - from != word.length()) {
      return false;
    }
    for (int i = 0; i < word.length(); i++) {
      int c = s[from + i] & 0xFF;
      if (c >= 'A' && c <= 'Z') {
        c = c - 'A' + 'a';
      }
      if (c != word.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** The kernel's parse_value, step for step: 0 or an error code; the value goes to {@code out[0]}. */
  static int parse(long address, int length, int kind, long scale, long bound, long[] out) {
    byte[] s = new byte[length];
    MemoryUtil.copyFromMemory(address, s, 0, length);
    int from = 0;
    int n = length;
    while (from < n && s[from] == ' ') {
      from++;
    }
    while (n > from && s[n - 1] == ' ') {
      n--;
    }
    if (n == from) {
      return Opcode.ERR_CAST;
    }
    Opcode.ParseKind k = PARSE_KINDS[kind];
    if (k == Opcode.ParseKind.BOOL) {
      if (lowerEquals(s, from, n, "true") || lowerEquals(s, from, n, "false")) {
        out[0] = lowerEquals(s, from, n, "true") ? 1 : 0;
        return 0;
      }
      return Opcode.ERR_CAST;
    }
    if (k == Opcode.ParseKind.DATE) {
      int i = from;
      long[] part = new long[3];
      for (int p = 0; p < 3; p++) {
        int start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 9) {
          part[p] = part[p] * 10 + (s[i++] - '0');
        }
        int width = i - start;
        if (width == 0 || (p == 0 && width != 4) || (p > 0 && width > 2)) {
          return Opcode.ERR_CAST;
        }
        if (p < 2) {
          if (i >= n || s[i] != '-') {
            return Opcode.ERR_CAST;
          }
          i++;
        }
      }
      if (i != n) {
        return Opcode.ERR_CAST;
      }
      long y = part[0];
      long m = part[1];
      long d = part[2];
      boolean leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
      long days = m == 2 ? (leap ? 29 : 28) : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
      if (m < 1 || m > 12 || d < 1 || d > days) {
        return Opcode.ERR_CAST;
      }
      out[0] = daysFromCivil(y, m, d);
      return 0;
    }
    boolean neg = false;
    int i = from;
    if (s[i] == '+' || s[i] == '-') {
      neg = s[i] == '-';
      i++;
    }
    if (k == Opcode.ParseKind.FLOAT64) {
      if (lowerEquals(s, i, n, "nan")) {
        out[0] = Double.doubleToRawLongBits(Double.NaN);
        return 0;
      }
      if (lowerEquals(s, i, n, "infinity") || lowerEquals(s, i, n, "inf")) {
        out[0] = Double.doubleToRawLongBits(neg ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY);
        return 0;
      }
    }
    long mant = 0;
    int exp10 = 0;
    int digits = 0;
    int next = -1;
    boolean any = false;
    boolean dot = false;
    boolean dropped = false;
    for (; i < n; i++) {
      int c = s[i] & 0xFF;
      if (c == '.' && !dot) {
        dot = true;
        continue;
      }
      if (c < '0' || c > '9') {
        break;
      }
      any = true;
      int v = c - '0';
      if (k == Opcode.ParseKind.DECIMAL64 && dot && exp10 <= -scale) {
        if (next < 0) {
          next = v;
        }
        continue;
      }
      if (mant == 0 && v == 0) {
        if (dot) {
          exp10--;
        }
        continue;
      }
      if (digits < 19) {
        mant = mant * 10 + v;
        digits++;
        if (dot) {
          exp10--;
        }
      } else {
        if (k != Opcode.ParseKind.FLOAT64) {
          return Opcode.ERR_CAST;
        }
        dropped |= v != 0;
        if (!dot) {
          exp10++;
        }
      }
    }
    if (!any) {
      return Opcode.ERR_CAST;
    }
    if (k == Opcode.ParseKind.FLOAT64 && i < n && (s[i] == 'e' || s[i] == 'E')) {
      i++;
      boolean eneg = false;
      if (i < n && (s[i] == '+' || s[i] == '-')) {
        eneg = s[i] == '-';
        i++;
      }
      int e = 0;
      int ed = 0;
      while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (e < 100_000) {
          e = e * 10 + (s[i] - '0');
        }
        i++;
        ed++;
      }
      if (ed == 0) {
        return Opcode.ERR_CAST;
      }
      exp10 += eneg ? -e : e;
    }
    if (i != n) {
      return Opcode.ERR_CAST;
    }
    if (k == Opcode.ParseKind.FLOAT64) {
      double r;
      if (mant == 0) {
        r = 0.0;
      } else if (dropped || Long.compareUnsigned(mant, 1L << 53) > 0 || exp10 < -22 || exp10 > 22) {
        return Opcode.ERR_INEXACT;
      } else {
        r = exp10 >= 0 ? (double) mant * POWERS_OF_TEN[exp10] : (double) mant / POWERS_OF_TEN[-exp10];
      }
      out[0] = Double.doubleToRawLongBits(neg ? -r : r);
      return 0;
    }
    long target = k == Opcode.ParseKind.DECIMAL64 ? scale : 0;
    if (k == Opcode.ParseKind.INT64 && exp10 < 0) {
      return Opcode.ERR_CAST;
    }
    java.math.BigInteger v = new java.math.BigInteger(Long.toUnsignedString(mant));
    java.math.BigInteger limit = java.math.BigInteger.valueOf(Long.MAX_VALUE).add(java.math.BigInteger.ONE);
    for (long e = 0; e < exp10 + target; e++) {
      v = v.multiply(java.math.BigInteger.TEN);
      if (v.compareTo(limit) > 0) {
        return Opcode.ERR_CAST;
      }
    }
    if (next >= 5) {
      v = v.add(java.math.BigInteger.ONE);
    }
    if (neg) {
      v = v.negate();
    }
    if (v.bitLength() > 63) {
      return Opcode.ERR_CAST;
    }
    long r = v.longValue();
    if (k == Opcode.ParseKind.DECIMAL64 && (r >= bound || r <= -bound)) {
      return Opcode.ERR_CAST;
    }
    out[0] = r;
    return 0;
  }

  /** Day number of a proleptic Gregorian date: the inverse of {@link #civil}, as the kernel computes it. */
  static long daysFromCivil(long y, long m, long d) {
    y -= m <= 2 ? 1 : 0;
    long era = Math.floorDiv(y, 400);
    long yoe = y - era * 400;
    long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146_097 + doe - 719_468;
  }

  /** The kernel's add_months: the day clamped to the new month's length. */
  static long addMonths(long days, long months) {
    long index = civil(days, 0) * 12 + (civil(days, 1) - 1) + months;
    long y = Math.floorDiv(index, 12);
    long m = index - y * 12 + 1;
    boolean leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    long length = m == 2 ? (leap ? 29 : 28) : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
    return daysFromCivil(y, m, Math.min(civil(days, 2), length));
  }

  /** Unsigned byte order, a prefix first (the kernel's cmp_s). */
  static int compareBytes(long a, int la, long b, int lb) {
    int n = Math.min(la, lb);
    int i = 0;
    // eight bytes at a time: the first byte that differs decides, as between the words read
    // as big-endian unsigned numbers
    for (; i + 8 <= n; i += 8) {
      long x = MemoryUtil.getLong(a + i);
      long y = MemoryUtil.getLong(b + i);
      if (x != y) {
        return LITTLE_ENDIAN ? Long.compareUnsigned(Long.reverseBytes(x), Long.reverseBytes(y)) < 0 ? -1 : 1
            : Long.compareUnsigned(x, y) < 0 ? -1 : 1;
      }
    }
    for (; i < n; i++) {
      int c = Integer.compare(MemoryUtil.getByte(a + i) & 0xFF, MemoryUtil.getByte(b + i) & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(la, lb);
  }

  /**
   * Byte offsets [start, end) of characters [from, to) (1-based, from >= 1) of a UTF-8 string,
   * clipped to the string (the kernel's char_range).
   */
  static long[] charRange(long s, int n, long from, long to) {
    long pos = 1;
    int i = 0;
    while (i < n && pos < from) {
      i = Math.min(n, i + codePointBytes(MemoryUtil.getByte(s + i) & 0xFF));
      pos++;
    }
    int start = i;
    while (i < n && pos < to) {
      i = Math.min(n, i + codePointBytes(MemoryUtil.getByte(s + i) & 0xFF));
      pos++;
    }
    return new long[] {start, i};
  }

  /** 1-based character position of the first occurrence of needle in hay, 0 if none. */
  static long position(long needle, int m, long hay, int n) {
    long chars = 0;
    for (int i = 0; i + m <= n; ) {
      if (compareBytes(needle, m, hay + i, m) == 0) {
        return chars + 1;
      }
      i += codePointBytes(MemoryUtil.getByte(hay + i) & 0xFF);
      chars++;
    }
    return 0;
  }

  /** Bytes of the UTF-8 code point starting with {@code lead} (1 for stray bytes). */
  private static int codePointBytes(int lead) {
    return lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF8 ? 4 : 1;
  }

  /**
   * SQL LIKE over UTF-8 bytes: literal bytes match themselves, {@code _} one code point,
   * {@code %} any run, retried from the last {@code %} one code point further on a mismatch
   * (the kernel's like() is the same loop).
   */
  static boolean like(long s, int n, long p, int m, int escape) {
    int si = 0;
    int pi = 0;
    int starP = -1;
    int starS = -1;
    while (si < n) {
      boolean matched = false;
      if (pi < m) {
        int pc = MemoryUtil.getByte(p + pi) & 0xFF;
        if (pc == escape && pi + 1 < m) {
          int w = codePointBytes(MemoryUtil.getByte(p + pi + 1) & 0xFF);
          if (si + w <= n && pi + 1 + w <= m && compareBytes(s + si, w, p + pi + 1, w) == 0) {
            si += w;
            pi += 1 + w;
            matched = true;
          }
        } else if (pc == '%') {
          starP = pi++;
          starS = si;
          continue;
        } else if (pc == '_') {
          si = Math.min(n, si + codePointBytes(MemoryUtil.getByte(s + si) & 0xFF));
          pi++;
          matched = true;
        } else if ((MemoryUtil.getByte(s + si) & 0xFF) == pc) {
          si++;
          pi++;
          matched = true;
        }
      }
      if (matched) {
        continue;
      }
      if (starP < 0) {
        return false;
      }
      pi = starP + 1;
      starS = Math.min(n, starS + codePointBytes(MemoryUtil.getByte(s + starS) & 0xFF));
      si = starS;
    }
    while (pi < m && (MemoryUtil.getByte(p + pi) & 0xFF) == '%') {
      pi++;
    }
    return pi == m;
  }

  /** x / d rounded half away from zero, d > 0 (as the kernel does). */
  static long divideRoundingAway(long x, long d) {
    long q = x / d;
    long rem = x % d;
    if (Math.abs(rem) * 2 >= d) {
      q += x < 0 ? -1 : 1;
    }
    return q;
  }

  /** C's round(): nearest, ties away from zero. */
  static double roundHalfAway(double v) {
    double t = v < 0 ? Math.ceil(v) : Math.floor(v);
    return Math.abs(v - t) == 0.5 ? t + Math.signum(v) : Math.rint(v);
  }

  static boolean fits(long v, int bits) {
    return bits >= 64 || (v >= -(1L << (bits - 1)) && v < (1L << (bits - 1)));
  }

  private static long fit(long v, int bits) {
    if (!fits(v, bits)) {
      throw new ArithmeticException("overflow");
    }
    return v;
  }

  static boolean test(int cmp, int c) {
    return switch (CMPS[cmp]) {
      case EQ -> c == 0;
      case NE -> c != 0;
      case LT -> c < 0;
      case LE -> c <= 0;
      case GT -> c > 0;
      case GE -> c >= 0;
    };
  }
}
