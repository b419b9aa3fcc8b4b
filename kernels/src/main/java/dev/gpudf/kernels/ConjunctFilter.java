package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;

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
    CpuEval.Inputs[] inputs = new CpuEval.Inputs[parts.size()];
    for (int k = 0; k < programs.length; k++) {
      if (StringBuild.anywhere(parts.get(k), types)) {
        return null;
      }
      programs[k] = ExprCompiler.compile(parts.get(k), types);
      if (!CpuBatchEval.supports(programs[k]) || !programs[k].result().equals(DataType.BOOL)) {
        return null;
      }
      List<HostColumn> slots = new ArrayList<>();
      for (int c : programs[k].columns()) {
        slots.add(t.column(c));
      }
      inputs[k] = CpuEval.Inputs.of(slots);
    }
    order(programs, inputs);
    List<ArrowBuf> pools = new ArrayList<>();
    try {
      long[] pool = new long[programs.length];
      for (int k = 0; k < programs.length; k++) {
        ArrowBuf b = exec.allocator().buffer(Math.max(1, programs[k].strings().length));
        pools.add(b);
        b.setBytes(0, programs[k].strings());
        pool[k] = b.memoryAddress();
      }
      int n = t.rowCount();
      int chunks = (n + CHUNK - 1) / CHUNK;
      int[][] kept = new int[chunks][];
      Exec.parallelChecked(exec::checkpoint, chunks,
          ch -> kept[ch] = chunk(programs, inputs, pool, ch * CHUNK, Math.min(n, (ch + 1) * CHUNK)));
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
   * Conjuncts that walk strings' bytes moved after those that do not, each group in its written
   * order: a cheap conjunct first leaves the dear ones fewer rows (TPC-H q19's quantity range before
   * its ship mode and instruction). Any order keeps the same rows, and one that meets an error
   * gives way to the whole condition, so the order changes no answer and no error.
   */
  private static void order(Program[] programs, CpuEval.Inputs[] inputs) {
    Integer[] at = new Integer[programs.length];
    for (int k = 0; k < at.length; k++) {
      at[k] = k;
    }
    java.util.Arrays.sort(at, java.util.Comparator.comparing(k -> programs[k].scansStrings()));
    Program[] p = programs.clone();
    CpuEval.Inputs[] in = inputs.clone();
    for (int k = 0; k < at.length; k++) {
      programs[k] = p[at[k]];
      inputs[k] = in[at[k]];
    }
  }

  /** The kept rows among {@code [from, to)}, conjunct by conjunct; null when one failed on a row in play. */
  private static int[] chunk(Program[] programs, CpuEval.Inputs[] inputs, long[] pool, int from, int to) {
    // the rows in play (null: all of from .. to), and which of them met a NULL conjunct (null: none)
    int[] rows = null;
    boolean[] sawNull = null;
    int count = to - from;
    for (int k = 0; k < programs.length && count > 0; k++) {
      Program p = programs[k];
      CpuEval.Inputs in = inputs[k];
      CpuBatchEval.Registers regs = CpuBatchEval.Registers.ofThread(p.registers());
      int res = p.resultRegister();
      int[] next = new int[count];
      boolean[] nextNull = null;
      int kept = 0;
      for (int b = 0; b < count; b += CpuBatchEval.BATCH) {
        int m = Math.min(CpuBatchEval.BATCH, count - b);
        CpuBatchEval.run(p, in.data(), in.valid(), in.offsets(), in.widths(), pool[k], rows, rows == null ? from + b : b, m,
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
