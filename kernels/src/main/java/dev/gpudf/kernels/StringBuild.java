package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * The parts of an expression that build new strings ({@code ||}, UPPER, LOWER, REPLACE, LPAD,
 * RPAD, CAST to VARCHAR),
 * which the register interpreter cannot hold: each is computed first, as a column of its own
 * (two launches of {@code strings.cu}, or the CPU twin here), and the rest of the expression reads
 * it like an input column. UPPER and LOWER map each code point of the Basic Multilingual Plane
 * through Java's simple case mapping ({@link Character#toUpperCase(int)}); longer code points and
 * bytes that are not well-formed UTF-8 stay as they are. LPAD and RPAD count characters as
 * those do: a byte that starts no well-formed sequence is one character.
 */
final class StringBuild {
  private StringBuild() {}

  /** What CAST(... AS VARCHAR) formats; the ordinal is {@code Kind} in {@code strings.cu}. */
  private enum FormatKind { I8, I16, I32, I64, DEC64, DEC128, DATE, BOOL }

  private static final int[] UPPER = caseTable(true);
  private static final int[] LOWER = caseTable(false);

  private static int[] caseTable(boolean upper) {
    int[] t = new int[0x10000];
    for (int cp = 0; cp < t.length; cp++) {
      t[cp] = upper ? Character.toUpperCase(cp) : Character.toLowerCase(cp);
    }
    return t;
  }

  /** Whether {@code e} itself builds strings (its arguments evaluated over columns of {@code input}). */
  static boolean builds(Expr e, List<DataType> input) {
    if (e instanceof Expr.Call c) {
      return switch (c.op()) {
        case CONCAT, UPPER, LOWER, REPLACE, LPAD, RPAD -> true;
        default -> false;
      };
    }
    return e instanceof Expr.Cast c && c.type().id() == TypeId.STRING
        && Evaluate.typeOf(c.arg(), input).id() != TypeId.STRING;
  }

  /** Whether {@code e} or any part of it builds strings. */
  static boolean anywhere(Expr e, List<DataType> input) {
    return Expr.anyPart(e, part -> builds(part, input));
  }

  /**
   * {@code e} with each string-building part replaced by a column numbered after the input's
   * {@code width} columns; {@code made} receives those columns, which the caller closes.
   */
  static Expr materialize(Exec exec, EvalInput in, Expr e, List<Column> made) {
    return Expr.rewrite(e, part -> {
      if (!builds(part, in.types())) {
        return null;
      }
      made.add(build(exec, in, part));
      return Expr.col(in.width() + made.size() - 1);
    });
  }

  /** {@code e} with each string-building part replaced by a VARCHAR placeholder: for typing only. */
  static Expr placeholders(Expr e, List<DataType> input) {
    return Expr.rewrite(e, part -> builds(part, input) ? new Expr.Lit(DataType.STRING, "") : null);
  }

  /** Evaluates string-building {@code e} into a new column; the caller closes it. */
  static Column build(Exec exec, EvalInput in, Expr e) {
    List<Column> args = new ArrayList<>();
    try {
      List<Expr> exprs = e instanceof Expr.Call c ? c.args() : List.of(((Expr.Cast) e).arg());
      for (Expr a : exprs) {
        // a column is read where it is (the interpreter would refuse DECIMAL beyond 18 digits)
        if (a instanceof Expr.Col c) {
          Column col = in.columns().get(c.index());
          col.retain();
          args.add(col);
        } else {
          args.add(Evaluate.evaluate(exec, in, a));
        }
      }
      if (e instanceof Expr.Cast) {
        return format(exec, args.get(0));
      }
      Expr.Call call = (Expr.Call) e;
      int arity = switch (call.op()) {
        case CONCAT -> 2;
        case REPLACE, LPAD, RPAD -> 3;
        default -> 1;
      };
      if (args.size() != arity) {
        throw new UserException(call.op() + " takes " + arity + " arguments, not " + args.size());
      }
      for (int i = 0; i < arity; i++) {
        TypeId want = i == 1 && (call.op() == Op.LPAD || call.op() == Op.RPAD) ? TypeId.INT64 : TypeId.STRING;
        if (args.get(i).type().id() != want) {
          throw new UserException(call.op() + " takes " + (want == TypeId.STRING ? "a string" : "a BIGINT length")
              + " as argument " + (i + 1) + ", not " + args.get(i).type());
        }
      }
      return switch (call.op()) {
        case CONCAT -> concat(exec, args.get(0), args.get(1));
        case REPLACE -> replace(exec, args.get(0), args.get(1), args.get(2));
        case LPAD, RPAD -> pad(exec, args.get(0), args.get(1), args.get(2), call.op() == Op.LPAD);
        default -> changeCase(exec, args.get(0), call.op() == Op.UPPER ? UPPER : LOWER);
      };
    } finally {
      args.forEach(Column::close);
    }
  }

  private static Column concat(Exec exec, Column a, Column b) {
    if (a instanceof DeviceColumn da) {
      DeviceColumn db = (DeviceColumn) b;
      return assemble(exec, a.rowCount(), "concat_lengths_kernel",
          java.util.Arrays.asList(da.offsets(), da.validity(), db.offsets(), db.validity()), "concat_copy_kernel",
          List.of(da.offsets(), da.data(), db.offsets(), db.data()));
    }
    VarCharVector va = (VarCharVector) ((HostColumn) a).vector();
    VarCharVector vb = (VarCharVector) ((HostColumn) b).vector();
    return hostStrings(exec, a.rowCount(), i -> {
      byte[] x = va.get(i);
      byte[] y = vb.get(i);
      if (x == null || y == null) {
        return null;
      }
      byte[] r = java.util.Arrays.copyOf(x, x.length + y.length);
      System.arraycopy(y, 0, r, x.length, y.length);
      return r;
    });
  }

  private static Column replace(Exec exec, Column s, Column from, Column to) {
    if (s instanceof DeviceColumn ds) {
      DeviceColumn df = (DeviceColumn) from;
      DeviceColumn dt = (DeviceColumn) to;
      return assemble(exec, s.rowCount(), "replace_lengths_kernel", java.util.Arrays.asList(ds.offsets(), ds.data(),
          ds.validity(), df.offsets(), df.data(), df.validity(), dt.offsets(), dt.validity()), "replace_copy_kernel",
          List.of(ds.offsets(), ds.data(), df.offsets(), df.data(), dt.offsets(), dt.data()));
    }
    VarCharVector vs = (VarCharVector) ((HostColumn) s).vector();
    VarCharVector vf = (VarCharVector) ((HostColumn) from).vector();
    VarCharVector vt = (VarCharVector) ((HostColumn) to).vector();
    return hostStrings(exec, s.rowCount(), i -> {
      byte[] x = vs.get(i);
      byte[] f = vf.get(i);
      byte[] t = vt.get(i);
      return x == null || f == null || t == null ? null : replaceBytes(x, f, t);
    });
  }

  /** The CPU twin of {@code replace_copy_kernel}. */
  private static byte[] replaceBytes(byte[] s, byte[] f, byte[] t) {
    if (f.length == 0) {
      return s;
    }
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length);
    for (int k = 0; k < s.length;) {
      if (k + f.length <= s.length && java.util.Arrays.equals(s, k, k + f.length, f, 0, f.length)) {
        out.write(t, 0, t.length);
        k += f.length;
      } else {
        out.write(s[k++]);
      }
    }
    return out.toByteArray();
  }

  private static Column pad(Exec exec, Column s, Column target, Column fill, boolean left) {
    if (s instanceof DeviceColumn ds) {
      DeviceColumn dn = (DeviceColumn) target;
      DeviceColumn df = (DeviceColumn) fill;
      return assemble(exec, s.rowCount(), "pad_lengths_kernel", java.util.Arrays.asList(ds.offsets(), ds.data(),
          ds.validity(), dn.data(), dn.validity(), df.offsets(), df.data(), df.validity()), "pad_copy_kernel",
          List.of(ds.offsets(), ds.data(), dn.data(), df.offsets(), df.data(), left ? 1 : 0));
    }
    VarCharVector vs = (VarCharVector) ((HostColumn) s).vector();
    org.apache.arrow.vector.BigIntVector vn = (org.apache.arrow.vector.BigIntVector) ((HostColumn) target).vector();
    VarCharVector vf = (VarCharVector) ((HostColumn) fill).vector();
    return hostStrings(exec, s.rowCount(), i -> {
      byte[] x = vs.get(i);
      byte[] f = vf.get(i);
      return x == null || f == null || vn.isNull(i) ? null : padBytes(x, vn.get(i), f, left);
    });
  }

  /** The CPU twin of {@code pad_copy_kernel}. */
  private static byte[] padBytes(byte[] s, long target, byte[] f, boolean left) {
    long want = Math.max(0, target);
    int keep = charPrefix(s, want);
    long have = charCount(s, keep);
    java.io.ByteArrayOutputStream pad = new java.io.ByteArrayOutputStream();
    if (have < want && f.length > 0) {
      long fc = charCount(f, f.length);
      long missing = want - have;
      long copies = missing / fc;
      if (copies > Integer.MAX_VALUE || copies * f.length + charPrefix(f, missing % fc) + keep > Integer.MAX_VALUE) {
        throw new UserException("a padded string of " + target + " characters is longer than a column's 2 GiB limit");
      }
      for (long c = 0; c < copies; c++) {
        pad.write(f, 0, f.length);
      }
      pad.write(f, 0, charPrefix(f, missing % fc));
    }
    byte[] p = pad.toByteArray();
    byte[] out = new byte[keep + p.length];
    System.arraycopy(left ? p : s, 0, out, 0, left ? p.length : keep);
    System.arraycopy(left ? s : p, 0, out, left ? p.length : keep, left ? keep : p.length);
    return out;
  }

  /** The byte length of {@code s}'s first {@code chars} characters (all of it when shorter), as {@code decode} reads them. */
  private static int charPrefix(byte[] s, long chars) {
    int k = 0;
    for (long c = 0; k < s.length && c < chars; c++) {
      k += Math.max(1, charLength(s, k));
    }
    return k;
  }

  /** The characters of {@code s}'s first {@code bytes} bytes. */
  private static long charCount(byte[] s, int bytes) {
    long c = 0;
    for (int k = 0; k < bytes; c++) {
      k += Math.max(1, charLength(s, k));
    }
    return c;
  }

  /** The byte length of the well-formed character at {@code s[k]}, or 0 when none starts there (the twin of {@code decode}). */
  private static int charLength(byte[] s, int k) {
    int b = s[k] & 0xFF;
    int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || k + len > s.length) {
      return 0;
    }
    for (int j = 1; j < len; j++) {
      if ((s[k + j] & 0xC0) != 0x80) {
        return 0;
      }
    }
    return len;
  }

  private static Column changeCase(Exec exec, Column a, int[] table) {
    if (a instanceof DeviceColumn da) {
      try (DeviceBuffer t = exec.upload(table)) {
        return assemble(exec, a.rowCount(), "case_lengths_kernel",
            java.util.Arrays.asList(da.offsets(), da.data(), da.validity(), t), "case_copy_kernel",
            List.of(da.offsets(), da.data(), t));
      }
    }
    VarCharVector v = (VarCharVector) ((HostColumn) a).vector();
    return hostStrings(exec, a.rowCount(), i -> {
      byte[] s = v.get(i);
      return s == null ? null : mapCase(s, table);
    });
  }

  /** The CPU twin of {@code case_copy_kernel}, with its decoder's rules. */
  private static byte[] mapCase(byte[] s, int[] table) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length + 4);
    for (int k = 0; k < s.length;) {
      int b = s[k] & 0xFF;
      int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
      int cp = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
      boolean ok = len > 0 && k + len <= s.length;
      for (int j = 1; ok && j < len; j++) {
        int x = s[k + j] & 0xFF;
        ok = (x & 0xC0) == 0x80;
        cp = (cp << 6) | (x & 0x3F);
      }
      if (!ok) {
        out.write(b);
        k++;
        continue;
      }
      int mapped = cp < 0x10000 ? table[cp] : cp;
      byte[] enc = encode(mapped);
      out.write(enc, 0, enc.length);
      k += len;
    }
    return out.toByteArray();
  }

  private static byte[] encode(int cp) {
    if (cp < 0x80) {
      return new byte[] {(byte) cp};
    }
    if (cp < 0x800) {
      return new byte[] {(byte) (0xC0 | (cp >> 6)), (byte) (0x80 | (cp & 0x3F))};
    }
    if (cp < 0x10000) {
      return new byte[] {(byte) (0xE0 | (cp >> 12)), (byte) (0x80 | ((cp >> 6) & 0x3F)), (byte) (0x80 | (cp & 0x3F))};
    }
    return new byte[] {(byte) (0xF0 | (cp >> 18)), (byte) (0x80 | ((cp >> 12) & 0x3F)),
      (byte) (0x80 | ((cp >> 6) & 0x3F)), (byte) (0x80 | (cp & 0x3F))};
  }

  private static Column format(Exec exec, Column a) {
    DataType t = a.type();
    FormatKind kind = switch (t.id()) {
      case INT8 -> FormatKind.I8;
      case INT16 -> FormatKind.I16;
      case INT32 -> FormatKind.I32;
      case INT64 -> FormatKind.I64;
      case DECIMAL -> t.isDecimal64() ? FormatKind.DEC64 : FormatKind.DEC128;
      case DATE -> FormatKind.DATE;
      case BOOL -> FormatKind.BOOL;
      default -> throw new NotSupportedException("CAST of " + t + " to VARCHAR is not supported yet");
    };
    int scale = t.id() == TypeId.DECIMAL ? t.scale() : 0;
    if (a instanceof DeviceColumn d) {
      return assemble(exec, a.rowCount(), "format_lengths_kernel",
          java.util.Arrays.asList(d.data(), d.validity(), kind.ordinal(), scale), "format_copy_kernel",
          List.of(d.data(), kind.ordinal(), scale));
    }
    FieldVector v = ((HostColumn) a).vector();
    return hostStrings(exec, a.rowCount(), i -> v.isNull(i) ? null : text(v, kind, scale, i)
        .getBytes(StandardCharsets.UTF_8));
  }

  /** The CPU twin of {@code format_text}. */
  private static String text(FieldVector v, FormatKind kind, int scale, int i) {
    return switch (kind) {
      case BOOL -> ((BitVector) v).get(i) == 1 ? "TRUE" : "FALSE";
      case DATE -> {
        LocalDate d = LocalDate.ofEpochDay(((org.apache.arrow.vector.DateDayVector) v).get(i));
        int y = d.getYear();
        String year = String.format(java.util.Locale.ROOT, "%04d", Math.abs((long) y));
        yield (y < 0 ? "-" : "") + year + String.format(java.util.Locale.ROOT, "-%02d-%02d", d.getMonthValue(),
            d.getDayOfMonth());
      }
      case DEC64, DEC128 -> ((DecimalVector) v).getObject(i).toPlainString();
      default -> Long.toString(((org.apache.arrow.vector.BaseIntVector) v).getValueAsLong(i));
    };
  }

  /** The CPU twin's assembly: {@code row} gives each row's bytes (null for NULL), rows in parallel. */
  private static HostColumn hostStrings(Exec exec, int n, IntFunction<byte[]> row) {
    byte[][] rows = new byte[n][];
    IntStream.range(0, n).parallel().forEach(i -> rows[i] = row.apply(i));
    long total = 0;
    for (byte[] r : rows) {
      total += r == null ? 0 : r.length;
    }
    if (total > Integer.MAX_VALUE) {
      throw new UserException("the expression's strings hold " + total + " bytes, more than a column's 2 GiB limit");
    }
    VarCharVector v = new VarCharVector("expr", exec.allocator());
    try {
      v.allocateNew(Math.max(1, total), n);
      for (int i = 0; i < n; i++) {
        if (rows[i] == null) {
          v.setNull(i);
        } else {
          v.set(i, rows[i]);
        }
      }
      v.setValueCount(n);
      return new HostColumn(v);
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }

  /**
   * Runs a lengths kernel (its arguments, then the int64 lengths and the validity words), scans
   * the lengths into Arrow offsets, and runs the copy kernel (its arguments, then the offsets
   * and the bytes): the new string column, which the caller owns.
   */
  private static DeviceColumn assemble(Exec exec, int n, String lengthsKernel, List<?> lengthArgs,
      String copyKernel, List<?> copyArgs) {
    List<DeviceBuffer> owned = new ArrayList<>(3);
    try {
      DeviceBuffer validity = exec.allocate(4L * ((n + 31L) / 32));
      owned.add(validity);
      DeviceBuffer offsets = exec.allocateZeroed(4L * (n + 1));
      owned.add(offsets);
      long total = 0;
      if (n > 0) {
        int grid = KernelLaunch.gridFor(exec.stream().device(), n);
        try (DeviceBuffer lengths = exec.allocate(8L * (n + 1))) {
          List<Object> la = new ArrayList<>(lengthArgs);
          la.add((long) n);
          la.add(lengths);
          la.add(validity);
          KernelLaunch.launch(lengthsKernel, grid, exec.stream(), la.toArray());
          total = DeviceScan.scan(exec, PhysicalType.I64, lengths, null, n, lengths, false, true);
          if (total > Integer.MAX_VALUE) {
            throw new UserException("the expression's strings hold " + total + " bytes, more than a column's 2 GiB limit");
          }
          KernelLaunch.launch("narrow_offsets_kernel", KernelLaunch.gridFor(exec.stream().device(), n + 1L),
              exec.stream(), lengths, n + 1L, offsets);
        }
      }
      // exactly the last offset, even when 0: a concatenation of columns appends each one's whole buffer
      DeviceBuffer chars = exec.allocate(total);
      owned.add(chars);
      if (n > 0) {
        List<Object> ca = new ArrayList<>(copyArgs);
        ca.add((long) n);
        ca.add(offsets);
        ca.add(chars);
        KernelLaunch.launch(copyKernel, KernelLaunch.gridFor(exec.stream().device(), n), exec.stream(),
            ca.toArray());
      }
      int nulls = n - (int) Bitmaps.countSet(exec.gpu(), validity, n, exec.stream());
      if (nulls == 0) {
        owned.remove(validity);
        validity.close();
        validity = null;
      }
      return new DeviceColumn(DataType.STRING, n, nulls, chars, offsets, validity);
    } catch (RuntimeException e) {
      owned.forEach(DeviceBuffer::close);
      throw e;
    }
  }
}
