package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Hash joins against nested loops over boxed key values, in the documented output order. */
class JoinTest {
  private static boolean matches(VectorSchemaRoot l, int[] lk, int i, VectorSchemaRoot r, int[] rk, int j) {
    for (int c = 0; c < lk.length; c++) {
      Object a = norm(l.getVector(lk[c]).getObject(i));
      Object b = norm(r.getVector(rk[c]).getObject(j));
      if (a == null || b == null || !a.equals(b)) {
        return false;
      }
    }
    return true;
  }

  private static Object norm(Object o) {
    if (o instanceof Double d) {
      return d.isNaN() ? "NaN" : d == 0 ? 0.0 : d;
    }
    return o == null || o instanceof Number || o instanceof Boolean ? o : o.toString();
  }

  private static int[][] oracle(VectorSchemaRoot l, VectorSchemaRoot r, int[] lk, int[] rk, Join.Kind kind) {
    return oracle(l, r, lk, rk, kind, (i, j) -> true);
  }

  private static int[][] oracle(VectorSchemaRoot l, VectorSchemaRoot r, int[] lk, int[] rk, Join.Kind kind,
      java.util.function.BiPredicate<Integer, Integer> residual) {
    List<Integer> ls = new ArrayList<>();
    List<Integer> rs = new ArrayList<>();
    boolean[] rHit = new boolean[r.getRowCount()];
    for (int i = 0; i < l.getRowCount(); i++) {
      boolean any = false;
      for (int j = 0; j < r.getRowCount(); j++) {
        if ((kind == Join.Kind.CROSS || matches(l, lk, i, r, rk, j)) && residual.test(i, j)) {
          any = true;
          rHit[j] = true;
          if (kind != Join.Kind.SEMI && kind != Join.Kind.ANTI) {
            ls.add(i);
            rs.add(j);
          }
        }
      }
      if ((kind == Join.Kind.SEMI && any) || (kind == Join.Kind.ANTI && !any)
          || (!any && (kind == Join.Kind.LEFT || kind == Join.Kind.FULL))) {
        ls.add(i);
        rs.add(-1);
      }
    }
    if (kind == Join.Kind.RIGHT || kind == Join.Kind.FULL) {
      for (int j = 0; j < r.getRowCount(); j++) {
        if (!rHit[j]) {
          ls.add(-1);
          rs.add(j);
        }
      }
    }
    return new int[][] {ls.stream().mapToInt(Integer::intValue).toArray(), rs.stream().mapToInt(Integer::intValue).toArray()};
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33, 300})
  void matchesNestedLoops(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(4))) {
        try (VectorSchemaRoot l = TestTables.allTypes(a, rows, nulls, 1); VectorSchemaRoot r = TestTables.allTypes(a, rows / 2 + 1, nulls, 2);
            HostTable lt = HostTable.fromArrow(l); HostTable rt = HostTable.fromArrow(r)) {
          int i8 = lt.names().indexOf("i8");
          int bool = lt.names().indexOf("bool");
          int str = lt.names().indexOf("str");
          for (int[] keys : new int[][] {{bool}, {str}, {bool, str}, {i8}}) {
            for (Join.Kind kind : Join.Kind.values()) {
              if (kind == Join.Kind.CROSS) {
                continue;
              }
              int[][] want = oracle(l, r, keys, keys, kind);
              int[][] got = Join.maps(lt, rt, keys, keys, kind);
              assertArrayEquals(want[0], got[0], kind + " left rows");
              assertArrayEquals(want[1], got[1], kind + " right rows");
            }
          }
          // the joined table: left columns then right columns, NULL rows for the missing side
          List<String> names = new ArrayList<>(lt.names());
          names.addAll(rt.names().stream().map(n -> "r_" + n).toList());
          try (HostTable joined = Join.join(exec, lt, rt, new int[] {str}, new int[] {str}, Join.Kind.FULL, names);
              VectorSchemaRoot out = joined.toArrow(a)) {
            int[][] want = oracle(l, r, new int[] {str}, new int[] {str}, Join.Kind.FULL);
            assertEquals(want[0].length, out.getRowCount());
            for (int k = 0; k < want[0].length; k++) {
              FieldVector lv = out.getVector(str);
              FieldVector rv = out.getVector(lt.columnCount() + str);
              assertEquals(want[0][k] < 0 ? null : norm(l.getVector(str).getObject(want[0][k])), norm(lv.getObject(k)));
              assertEquals(want[1][k] < 0 ? null : norm(r.getVector(str).getObject(want[1][k])), norm(rv.getObject(k)));
            }
          }
          try (HostTable cross = Join.join(exec, lt, rt, new int[0], new int[0], Join.Kind.CROSS, names)) {
            assertEquals((long) rows * (rows / 2 + 1), cross.rowCount());
          }
          assertThrows(UserException.class, () -> Join.join(exec, lt, rt, new int[] {i8}, new int[] {str}, Join.Kind.INNER, names));
        }
      }
    }
  }

  /** A non-equality condition on the candidate pairs, with and without equality keys, for every kind. */
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 33, 200})
  void residualConditionsDecideTheMatches(int rows) {
    try (RootAllocator a = new RootAllocator(); Exec exec = Exec.onCpu(a)) {
      try (VectorSchemaRoot l = TestTables.allTypes(a, rows, Nulls.every(5), 3);
          VectorSchemaRoot r = TestTables.allTypes(a, rows / 2 + 1, Nulls.every(3), 4);
          HostTable lt = HostTable.fromArrow(l); HostTable rt = HostTable.fromArrow(r)) {
        int i8 = lt.names().indexOf("i8");
        int bool = lt.names().indexOf("bool");
        int width = lt.columnCount();
        // left.i8 < right.i8, NULL (either side null) is false
        Expr less = Expr.call(Op.LT, Expr.col(i8), Expr.col(width + i8));
        java.util.function.BiPredicate<Integer, Integer> lessJava = (i, j) -> {
          Object x = l.getVector(i8).getObject(i);
          Object y = r.getVector(i8).getObject(j);
          return x != null && y != null && (Byte) x < (Byte) y;
        };
        List<String> names = new ArrayList<>(lt.names());
        names.addAll(rt.names().stream().map(n -> "r_" + n).toList());
        for (int[] keys : new int[][] {{}, {bool}}) {
          for (Join.Kind kind : Join.Kind.values()) {
            if (kind == Join.Kind.CROSS && keys.length > 0) {
              continue;
            }
            int[][] want = keys.length > 0 ? oracle(l, r, keys, keys, kind, lessJava)
                : reshape(oracle(l, r, keys, keys, Join.Kind.CROSS, lessJava), l.getRowCount(), r.getRowCount(), kind);
            try (HostTable joined = Join.join(exec, lt, rt, keys, keys, kind,
                kind == Join.Kind.SEMI || kind == Join.Kind.ANTI ? lt.names() : names, less)) {
              assertEquals(want[0].length, joined.rowCount(), kind + " on " + keys.length + " keys");
              try (VectorSchemaRoot out = joined.toArrow(a)) {
                for (int k = 0; k < want[0].length; k++) {
                  assertEquals(want[0][k] < 0 ? null : l.getVector(i8).getObject(want[0][k]), out.getVector(i8).getObject(k),
                      kind + " row " + k);
                  if (kind != Join.Kind.SEMI && kind != Join.Kind.ANTI) {
                    assertEquals(want[1][k] < 0 ? null : r.getVector(i8).getObject(want[1][k]),
                        out.getVector(width + i8).getObject(k), kind + " row " + k);
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  /** Inner pairs (in left order) made into the maps of {@code kind}, as the oracle would give them. */
  private static int[][] reshape(int[][] inner, int n, int m, Join.Kind kind) {
    List<Integer> ls = new ArrayList<>();
    List<Integer> rs = new ArrayList<>();
    boolean[] hit = new boolean[m];
    int p = 0;
    for (int i = 0; i < n; i++) {
      boolean any = false;
      for (; p < inner[0].length && inner[0][p] == i; p++) {
        any = true;
        hit[inner[1][p]] = true;
        if (kind != Join.Kind.SEMI && kind != Join.Kind.ANTI) {
          ls.add(i);
          rs.add(inner[1][p]);
        }
      }
      if ((kind == Join.Kind.SEMI && any) || (kind == Join.Kind.ANTI && !any)
          || (!any && (kind == Join.Kind.LEFT || kind == Join.Kind.FULL))) {
        ls.add(i);
        rs.add(-1);
      }
    }
    if (kind == Join.Kind.RIGHT || kind == Join.Kind.FULL) {
      for (int j = 0; j < m; j++) {
        if (!hit[j]) {
          ls.add(-1);
          rs.add(j);
        }
      }
    }
    return new int[][] {ls.stream().mapToInt(Integer::intValue).toArray(), rs.stream().mapToInt(Integer::intValue).toArray()};
  }
}
