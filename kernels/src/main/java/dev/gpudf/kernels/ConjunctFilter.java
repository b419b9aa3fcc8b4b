package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.StringCodes;
import dev.gpudf.columnar.HostTable;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * WHERE over a host table whose condition is a conjunction ({@code a AND b AND ...}): each conjunct
 * is evaluated only on the rows that the ones before it did not rule out, as vectorized engines'
 * filters do. Evaluating the whole condition ran every conjunct on every row: TPC-H q6's five
 * comparisons and four ANDs over all of lineitem, where 15% of the rows remain after the first two.
 *
 * <p>The rows kept are exactly the whole condition's. A row is ruled out only where a conjunct is
 * FALSE, which decides an AND whatever the others hold, their NULLs and errors included. A row
 * whose conjunct is NULL goes on to the later conjuncts and is dropped at the end. Where a
 * conjunct fails on a row still in play, {@link #keptRows} gives up (null) and the caller evaluates
 * the whole condition, which reports the error as before.
 */
final class ConjunctFilter {
  /** Rows per parallel task. */
  private static final int CHUNK = 1 << 14;

  private ConjunctFilter() {}

  /** The conjuncts of {@code e}, its nested ANDs flattened in order; {@code e} alone when it is no AND. */
  static List<Expr> conjuncts(Expr e) {
    List<Expr> out = new ArrayList<>();
    List<Expr> pending = new ArrayList<>(List.of(e));
    while (!pending.isEmpty()) {
      Expr x = pending.remove(0);
      if (x instanceof Expr.Call c && c.op() == Op.AND) {
        pending.addAll(0, c.args());
      } else {
        out.add(x);
      }
    }
    return out;
  }

  /**
   * Ids, in order, of the rows of {@code t} where {@code condition} is TRUE; null where this path
   * does not serve: a conjunct the batch evaluator does not run (or one that builds strings), or a
   * conjunct that failed on a row still in play. A condition of one conjunct is served too: its
   * kept rows come from the batches, with no mask column made and read again.
   */
  static int[] keptRows(Exec exec, HostTable t, Expr condition) {
    List<Expr> parts = conjuncts(condition);
    List<DataType> types = t.types();
    Program[] programs = new Program[parts.size()];
    for (int k = 0; k < programs.length; k++) {
      if (StringBuild.anywhere(parts.get(k), types)) {
        return null;
      }
      programs[k] = ExprCompiler.compile(parts.get(k), types);
      if (!CpuBatchEval.supports(programs[k]) || !programs[k].result().equals(DataType.BOOL)) {
        return null;
      }
    }
    List<ArrowBuf> pools = new ArrayList<>();
    try {
      long[] pool = new long[programs.length];
      for (int k = 0; k < programs.length; k++) {
        ArrowBuf b = exec.allocator().buffer(Math.max(1, programs[k].strings().length));
        pools.add(b);
        b.setBytes(0, programs[k].strings());
        pool[k] = b.memoryAddress();
      }
      Conjunct[] conjuncts = new Conjunct[programs.length];
      for (int k = 0; k < programs.length; k++) {
        List<Integer> columns = programs[k].columns();
        StringCodes codes = columns.size() == 1 ? t.column(columns.get(0)).codes() : null;
        byte[] outcomes = codes == null ? null : outcomes(exec, programs[k], codes, pool[k]);
        if (outcomes != null) {
          conjuncts[k] = new Conjunct(programs[k], null, pool[k], codes.codesAddress(), outcomes);
        } else {
          List<HostColumn> slots = new ArrayList<>();
          for (int c : columns) {
            slots.add(t.column(c));
          }
          conjuncts[k] = new Conjunct(programs[k], CpuEval.Inputs.of(slots), pool[k], 0, null);
        }
      }
      order(conjuncts);
      int n = t.rowCount();
      int chunks = (n + CHUNK - 1) / CHUNK;
      int[][] kept = new int[chunks][];
      Exec.parallelChecked(exec::checkpoint, chunks,
          ch -> kept[ch] = chunk(conjuncts, ch * CHUNK, Math.min(n, (ch + 1) * CHUNK)));
      int total = 0;
      for (int[] k : kept) {
        if (k == null) {
          return null;
        }
        total += k.length;
      }
      int[] rows = new int[total];
      int at = 0;
      for (int[] k : kept) {
        System.arraycopy(k, 0, rows, at, k.length);
        at += k.length;
      }
      return rows;
    } finally {
      pools.forEach(ArrowBuf::close);
    }
  }

  /**
   * One conjunct as it runs: over its columns ({@code inputs}), or, where it reads one column of
   * strings held as codes, by each row's code (the ints at address {@code codes}) from its
   * {@code outcomes} over the dictionary.
   */
  private record Conjunct(Program program, CpuEval.Inputs inputs, long pool, long codes, byte[] outcomes) {}

  private static final byte FALSE = 0;
  private static final byte TRUE = 1;
  private static final byte NULL = 2;
  private static final byte ERROR = 3;

  /**
   * {@code p} (reading one string column) over each entry of {@code codes}' dictionary and over
   * NULL: per entry its outcome, NULL's last ({@link #FALSE}, {@link #TRUE}, {@link #NULL} or
   * {@link #ERROR}); null where the dictionary holds more entries than the column has rows, where
   * the work per row would not shrink.
   */
  private static byte[] outcomes(Exec exec, Program p, StringCodes codes, long pool) {
    int n = codes.entries() + 1;
    if (n > codes.rows()) {
      return null;
    }
    byte[] out = new byte[n];
    try (HostColumn dictionary = codes.dictionary(exec.allocator(), "dictionary")) {
      CpuEval.Inputs in = CpuEval.Inputs.of(List.of(dictionary));
      CpuBatchEval.Registers regs = CpuBatchEval.Registers.ofThread(p.registers());
      int res = p.resultRegister();
      for (int b = 0; b < n; b += CpuBatchEval.BATCH) {
        int m = Math.min(CpuBatchEval.BATCH, n - b);
        CpuBatchEval.run(p, in.data(), in.valid(), in.offsets(), in.widths(), pool, null, b, m, regs);
        boolean clean = regs.clean(res);
        for (int i = 0; i < m; i++) {
          out[b + i] = !clean && regs.err[res][i] != 0 ? ERROR : !clean && regs.nul[res][i] ? NULL
              : regs.val[res][i] != 0 ? TRUE : FALSE;
        }
      }
    }
    return out;
  }

  /**
   * Conjuncts by codes first, then those that do not walk strings' bytes, then those that do, each
   * group in its written order: a cheap conjunct first leaves the dear ones fewer rows (TPC-H q19's
   * ship mode and instruction by their codes, then its quantity range). Any order keeps the same
   * rows, and one that meets an error gives way to the whole condition, so the order changes no
   * answer and no error.
   */
  private static void order(Conjunct[] conjuncts) {
    java.util.Arrays.sort(conjuncts, java.util.Comparator.comparingInt(
        c -> c.outcomes() != null ? 0 : c.program().scansStrings() ? 2 : 1));
  }

  /** The kept rows among {@code [from, to)}, conjunct by conjunct; null when one failed on a row in play. */
  private static int[] chunk(Conjunct[] conjuncts, int from, int to) {
    // the rows in play (null: all of from .. to), and which of them met a NULL conjunct (null: none)
    int[] rows = null;
    boolean[] sawNull = null;
    int count = to - from;
    for (int k = 0; k < conjuncts.length && count > 0; k++) {
      Conjunct c = conjuncts[k];
      int[] next = new int[count];
      boolean[] nextNull = null;
      int kept = 0;
      if (c.outcomes() != null) {
        byte[] outcomes = c.outcomes();
        long codes = c.codes();
        int nullAt = outcomes.length - 1;
        for (int i = 0; i < count; i++) {
          int row = rows == null ? from + i : rows[i];
          int code = MemoryUtil.getInt(codes + 4L * row);
          byte o = outcomes[code < 0 ? nullAt : code];
          if (o == ERROR) {
            return null;
          }
          if (o == FALSE) {
            continue;
          }
          if (o == NULL || sawNull != null && sawNull[i]) {
            if (nextNull == null) {
              nextNull = new boolean[count];
            }
            nextNull[kept] = true;
          }
          next[kept++] = row;
        }
      } else {
        Program p = c.program();
        CpuEval.Inputs in = c.inputs();
        CpuBatchEval.Registers regs = CpuBatchEval.Registers.ofThread(p.registers());
        int res = p.resultRegister();
        for (int b = 0; b < count; b += CpuBatchEval.BATCH) {
          int m = Math.min(CpuBatchEval.BATCH, count - b);
          CpuBatchEval.run(p, in.data(), in.valid(), in.offsets(), in.widths(), c.pool(), rows, rows == null ? from + b : b, m,
              regs);
          long[] v = regs.val[res];
          boolean clean = regs.clean(res);
          boolean[] isNull = regs.nul[res];
          int[] error = regs.err[res];
          for (int i = 0; i < m; i++) {
            if (!clean && error[i] != 0) {
              return null;
            }
            boolean nullHere = !clean && isNull[i];
            if (v[i] == 0 && !nullHere) {
              continue;
            }
            boolean nullBefore = sawNull != null && sawNull[b + i];
            if (nullHere || nullBefore) {
              if (nextNull == null) {
                nextNull = new boolean[count];
              }
              nextNull[kept] = true;
            }
            next[kept++] = rows == null ? from + b + i : rows[b + i];
          }
        }
      }
      rows = next;
      sawNull = nextNull;
      count = kept;
    }
    int[] out = new int[count];
    int kept = 0;
    for (int i = 0; i < count; i++) {
      if (sawNull == null || !sawNull[i]) {
        out[kept++] = rows[i];
      }
    }
    return kept == count ? out : java.util.Arrays.copyOf(out, kept);
  }
}
