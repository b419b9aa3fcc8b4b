package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A string column compared with constants, computed on the GPU ahead of the program that reads it
 * ({@code string_match.cu}): {@code c = 'x'}, {@code c <> 'x'}, {@code c IN ('x', 'y')}, an OR of
 * equalities or an AND of inequalities on one column (what Calcite makes of IN and NOT IN lists),
 * and LIKE patterns without {@code _} ({@code 'x%'}, {@code '%x'}, {@code '%special%requests%'}). The interpreter
 * compares strings byte by byte with a dispatch per instruction and one row a thread; one kernel
 * that does only this is several times faster, and what remains of the program is often
 * arithmetic only, which then runs as a generated kernel. The result is the BOOL column the
 * program would have computed (NULL where the string is NULL), so the interpreter and the CPU twin
 * ({@link CpuEval}'s comparisons and LIKE) stay the reference it is tested against.
 */
final class StringMatch {
  private StringMatch() {}

  /** Kernel modes: equal to one of the constants, or LIKE the pattern whose pieces between '%'s they are. */
  private enum Mode { EQUALS, LIKE }

  /** Column {@code column} matches {@code constants} in {@code mode}; negated: it does not. */
  private record Match(int column, Mode mode, List<String> constants, boolean negated) {}

  /** Whether some part of {@code e} is a match this class computes. */
  static boolean anywhere(Expr e, List<DataType> input) {
    return Expr.anyPart(e, part -> of(part, input) != null);
  }

  /**
   * {@code e} with each match computed into a new BOOL column of {@code made} (which the caller
   * closes) and read from there: column {@code in.width() + k} is {@code made.get(k)}.
   */
  static Expr materialize(Exec exec, EvalInput in, Expr e, List<Column> made) {
    return Expr.rewrite(e, part -> {
      Match m = of(part, in.types());
      if (m == null) {
        return null;
      }
      made.add(match(exec, (DeviceColumn) in.columns().get(m.column()), m));
      Expr ref = Expr.col(in.width() + made.size() - 1);
      return m.negated() ? Expr.call(Op.NOT, ref) : ref;
    });
  }

  /** The match {@code e} is, or null. */
  private static Match of(Expr e, List<DataType> input) {
    if (!(e instanceof Expr.Call c)) {
      return null;
    }
    List<Expr> args = c.args();
    return switch (c.op()) {
      case EQ, NE -> {
        if (args.size() != 2) {
          yield null;
        }
        int column = stringColumn(args.get(0), input) >= 0 ? 0 : 1;
        String constant = constant(args.get(1 - column));
        int index = stringColumn(args.get(column), input);
        yield index < 0 || constant == null ? null : new Match(index, Mode.EQUALS, List.of(constant), c.op() == Op.NE);
      }
      case IN -> {
        int index = args.isEmpty() ? -1 : stringColumn(args.get(0), input);
        List<String> constants = new ArrayList<>();
        for (Expr a : args.subList(Math.min(1, args.size()), args.size())) {
          constants.add(constant(a));
        }
        yield index < 0 || constants.isEmpty() || constants.contains(null) ? null
            : new Match(index, Mode.EQUALS, constants, false);
      }
      case OR, AND -> {
        // every argument an equality (OR) or an inequality (AND) of one column with a constant
        List<String> constants = new ArrayList<>();
        int index = -1;
        for (Expr a : args) {
          Match m = of(a, input);
          if (m == null || m.mode() != Mode.EQUALS || m.negated() != (c.op() == Op.AND) || (index >= 0 && m.column() != index)) {
            yield null;
          }
          index = m.column();
          constants.addAll(m.constants());
        }
        yield args.size() < 2 ? null : new Match(index, Mode.EQUALS, constants, c.op() == Op.AND);
      }
      case LIKE -> {
        int index = args.size() == 2 ? stringColumn(args.get(0), input) : -1;
        String pattern = index < 0 ? null : constant(args.get(1));
        yield pattern == null ? null : like(index, pattern);
      }
      default -> null;
    };
  }

  /** A LIKE pattern without '_': a constant (EQUALS), or the pieces between its '%'s; else null. */
  private static Match like(int column, String pattern) {
    if (pattern.indexOf('_') >= 0) {
      return null;
    }
    List<String> pieces = List.of(pattern.split("%", -1));
    return new Match(column, pieces.size() == 1 ? Mode.EQUALS : Mode.LIKE, pieces, false);
  }

  private static int stringColumn(Expr e, List<DataType> input) {
    return e instanceof Expr.Col col && col.index() >= 0 && col.index() < input.size()
        && input.get(col.index()).id() == TypeId.STRING ? col.index() : -1;
  }

  private static String constant(Expr e) {
    return e instanceof Expr.Lit lit && lit.type().id() == TypeId.STRING && lit.value() instanceof String s ? s : null;
  }

  /** The BOOL column of {@code m} over {@code col}; the caller closes it. */
  private static DeviceColumn match(Exec exec, DeviceColumn col, Match m) {
    int n = col.rowCount();
    int count = m.constants().size();
    // one upload: the constants' bounds (count + 1 int32), then their bytes
    List<byte[]> utf8 = m.constants().stream().map(c -> c.getBytes(StandardCharsets.UTF_8)).toList();
    int bytes = utf8.stream().mapToInt(b -> b.length).sum();
    ByteBuffer packed = ByteBuffer.allocate(4 * (count + 1) + bytes).order(ByteOrder.LITTLE_ENDIAN);
    int at = 0;
    packed.putInt(at);
    for (byte[] b : utf8) {
      at += b.length;
      packed.putInt(at);
    }
    utf8.forEach(packed::put);
    long words = (n + 31L) / 32;
    DeviceBuffer out = exec.allocate(4 * Math.max(1, words));
    DeviceBuffer validity = null;
    try (DeviceBuffer constants = exec.upload(packed.array())) {
      validity = col.validity() == null ? null : exec.allocate(4 * Math.max(1, words));
      if (n > 0) {
        KernelLaunch.launch("string_match_kernel", KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(),
            col.offsets(), col.data(), col.validity(), (long) n, constants.address() + 4L * (count + 1), constants, count,
            m.mode().ordinal(), out, validity);
      }
      return new DeviceColumn(DataType.BOOL, n, col.nullCount(), out, null, validity);
    } catch (RuntimeException e) {
      out.close();
      if (validity != null) {
        validity.close();
      }
      throw e;
    }
  }
}
