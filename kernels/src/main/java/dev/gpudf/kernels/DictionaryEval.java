package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Evaluation over dictionary-encoded columns: the table holds INT32 codes (a null code is a null
 * row) and a dictionary holds the distinct values. A part of the expression that reads one
 * encoded column and nothing else (a LIKE, a comparison, a SUBSTRING ...) is evaluated once per
 * dictionary entry, plus once for NULL when some code is null, and each row then looks its
 * result up by code: the string work scales with the dictionary, not the rows. An encoded column
 * read together with other columns is decoded (its values gathered by code) first.
 */
final class DictionaryEval {
  private DictionaryEval() {}

  /**
   * {@code e} over {@code in}, whose columns named in {@code dictionaries} are encoded; the caller
   * owns the result, the inputs are borrowed.
   */
  static Column evaluate(Exec exec, EvalInput in, Map<Integer, ? extends Column> dictionaries, Expr e) {
    for (Map.Entry<Integer, ? extends Column> d : dictionaries.entrySet()) {
      int i = d.getKey();
      if (i < 0 || i >= in.width()) {
        throw new UserException("a dictionary for column " + i + " of a " + in.width() + "-column table");
      }
      Column codes = in.columns().get(i);
      if (!codes.type().equals(DataType.INT32)) {
        throw new UserException("dictionary codes must be INT32, column " + i + " is " + codes.type());
      }
      if ((d.getValue() instanceof DeviceColumn) != in.onDevice()) {
        throw new UserException("the dictionary of column " + i + " is not on the table's backend");
      }
    }
    try (Made made = new Made(new ArrayList<>())) {
      Expr rest = rewrite(exec, in, dictionaries, e, made.columns(), new HashMap<>());
      if (rest instanceof Expr.Col c && c.index() >= in.width()) {
        // the whole expression was looked up: that column is the result
        return made.columns().remove(c.index() - in.width());
      }
      return Evaluate.evaluate(exec, in.plus(made.columns()), rest);
    }
  }

  /**
   * The columns made for one evaluation, closed together; a failure to close is added to the
   * failure being thrown (a device fault makes every later free fail too).
   */
  private record Made(List<Column> columns) implements AutoCloseable {
    @Override
    public void close() {
      RuntimeException first = null;
      for (Column c : columns) {
        try {
          c.close();
        } catch (RuntimeException ex) {
          if (first == null) {
            first = ex;
          } else {
            first.addSuppressed(ex);
          }
        }
      }
      if (first != null) {
        throw first;
      }
    }
  }

  /** {@code e} with each part over one encoded column, and each other read of one, replaced by a made column. */
  private static Expr rewrite(Exec exec, EvalInput in, Map<Integer, ? extends Column> dictionaries, Expr e,
      List<Column> made, Map<Integer, Integer> decoded) {
    Set<Integer> reads = new TreeSet<>();
    columnsOf(e, reads);
    if (e instanceof Expr.Col c) {
      if (!dictionaries.containsKey(c.index())) {
        return e;
      }
      Integer at = decoded.get(c.index());
      if (at == null) {
        made.add(lookUp(exec, in, dictionaries, c.index(), e));
        at = in.width() + made.size() - 1;
        decoded.put(c.index(), at);
      }
      return Expr.col(at);
    }
    if (reads.size() == 1 && dictionaries.containsKey(reads.iterator().next())) {
      int i = reads.iterator().next();
      Column looked = tryLookUp(exec, in, dictionaries, i, e);
      if (looked != null) {
        made.add(looked);
        return Expr.col(in.width() + made.size() - 1);
      }
    }
    if (e instanceof Expr.Call c) {
      List<Expr> args = new ArrayList<>();
      for (Expr a : c.args()) {
        args.add(rewrite(exec, in, dictionaries, a, made, decoded));
      }
      return new Expr.Call(c.op(), args);
    }
    if (e instanceof Expr.Cast c) {
      return new Expr.Cast(rewrite(exec, in, dictionaries, c.arg(), made, decoded), c.type());
    }
    return e;
  }

  /**
   * {@link #lookUp}, or null when evaluating {@code e} over the dictionary fails: an entry that no
   * row uses may fail where the rows do not (a CAST of every word), so the part is then evaluated
   * row by row over the decoded column, where a real failure names its row.
   */
  private static Column tryLookUp(Exec exec, EvalInput in, Map<Integer, ? extends Column> dictionaries, int i, Expr e) {
    try {
      return lookUp(exec, in, dictionaries, i, e);
    } catch (UserException entryFailed) {
      return null;
    }
  }

  /** {@code e}, which reads only encoded column {@code i}, for every row: per entry, then by code. */
  private static Column lookUp(Exec exec, EvalInput in, Map<Integer, ? extends Column> dictionaries, int i, Expr e) {
    Column dictionary = dictionaries.get(i);
    Column codes = in.columns().get(i);
    // a bare column is its dictionary, gathered as it is (the interpreter would copy it first)
    Column perEntry = e instanceof Expr.Col ? ColumnOps.kept(dictionary) : Evaluate.evaluate(exec,
        new EvalInput(List.of(dictionary), dictionary.rowCount(), in.onDevice()), replace(e, i, Expr.col(0)));
    try (perEntry) {
      if (codes.nullCount() == 0) {
        return ColumnOps.gather(exec, perEntry, codes);
      }
      // entry D (one past the dictionary) holds the result for NULL; null codes point at it
      Expr overNull = replace(e, i, new Expr.Lit(dictionary.type(), null));
      Expr nullToD = Expr.call(Op.COALESCE, Expr.col(0), Expr.lit(dictionary.rowCount()));
      try (Column forNull = Evaluate.evaluate(exec, new EvalInput(List.of(), 1, in.onDevice()), overNull);
          Column withNull = ColumnOps.concat(exec, perEntry, forNull);
          Column map = Evaluate.evaluate(exec, new EvalInput(List.of(codes), codes.rowCount(), in.onDevice()), nullToD)) {
        return ColumnOps.gather(exec, withNull, map);
      }
    }
  }

  private static void columnsOf(Expr e, Set<Integer> out) {
    if (e instanceof Expr.Col c) {
      out.add(c.index());
    } else if (e instanceof Expr.Call c) {
      c.args().forEach(a -> columnsOf(a, out));
    } else if (e instanceof Expr.Cast c) {
      columnsOf(c.arg(), out);
    }
  }

  private static Expr replace(Expr e, int column, Expr with) {
    if (e instanceof Expr.Col c) {
      return c.index() == column ? with : e;
    }
    if (e instanceof Expr.Call c) {
      return new Expr.Call(c.op(), c.args().stream().map(a -> replace(a, column, with)).toList());
    }
    return e instanceof Expr.Cast c ? new Expr.Cast(replace(c.arg(), column, with), c.type()) : e;
  }
}
