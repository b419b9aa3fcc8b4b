package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Row-wise comparisons of results from the two backends. */
final class Rows {
  private Rows() {}

  /**
   * Each row as a string of its values (floats in normal form: one NaN, no -0.0), sorted. The rows
   * are written and sorted on all cores: joins' results of a few hundred thousand rows made this
   * most of the gpu-tagged suite's longest test.
   */
  static List<String> sorted(VectorSchemaRoot root) {
    List<org.apache.arrow.vector.FieldVector> vectors = root.getFieldVectors();
    String[] out = java.util.stream.IntStream.range(0, root.getRowCount()).parallel().mapToObj(i -> {
      StringBuilder b = new StringBuilder();
      for (org.apache.arrow.vector.FieldVector v : vectors) {
        b.append(norm(v.getObject(i))).append('|');
      }
      return b.toString();
    }).toArray(String[]::new);
    java.util.Arrays.parallelSort(out);
    return java.util.Arrays.asList(out);
  }

  /**
   * Asserts that two results hold the same rows in any order; on a difference the message names
   * the counts and a few rows missing from {@code got} and a few it has in excess.
   */
  static void assertSameMultiset(VectorSchemaRoot want, VectorSchemaRoot got, String what) {
    assertEquals(want.getSchema(), got.getSchema(), what + ": schema");
    List<String> w = sorted(want);
    List<String> g = sorted(got);
    if (w.equals(g)) {
      return;
    }
    java.util.Map<String, Integer> diff = new java.util.TreeMap<>();
    w.forEach(x -> diff.merge(x, 1, Integer::sum));
    g.forEach(x -> diff.merge(x, -1, Integer::sum));
    List<String> missing = diff.entrySet().stream().filter(e -> e.getValue() > 0).limit(3).map(e -> e.getKey()).toList();
    List<String> extra = diff.entrySet().stream().filter(e -> e.getValue() < 0).limit(3).map(e -> e.getKey()).toList();
    org.junit.jupiter.api.Assertions.fail(what + ": " + w.size() + " rows wanted, " + g.size() + " got; missing e.g. "
        + missing + "; in excess e.g. " + extra);
  }

  private static Object norm(Object o) {
    if (o instanceof Double d) {
      return d.isNaN() ? "NaN" : d == 0 ? 0.0 : d;
    }
    if (o instanceof Float f) {
      return f.isNaN() ? "NaN" : f == 0 ? 0.0f : f;
    }
    return o;
  }

  /**
   * Asserts equal schemas and rows in the same order; FLOAT64 values may differ by a relative
   * 1e-9 (sums in another order), NaN equals NaN.
   */
  static void assertSameOrderedRows(VectorSchemaRoot want, VectorSchemaRoot got, String what) {
    assertEquals(want.getSchema(), got.getSchema(), what + ": schema");
    assertEquals(want.getRowCount(), got.getRowCount(), what + ": rows");
    for (int c = 0; c < want.getFieldVectors().size(); c++) {
      for (int i = 0; i < want.getRowCount(); i++) {
        Object x = norm(want.getVector(c).getObject(i));
        Object y = norm(got.getVector(c).getObject(i));
        String where = what + ": column " + want.getVector(c).getName() + " row " + i;
        if (x instanceof Double a && y instanceof Double b && !a.equals(b)) {
          assertTrue(Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) + 1e-9, where + ": " + a + " vs " + b);
        } else {
          assertEquals(x, y, where);
        }
      }
    }
  }
}
