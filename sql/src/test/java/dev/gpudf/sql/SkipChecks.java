package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Checks shared by the chunk-skipping tests: a file table answers as its resident copy, and how many chunks a plan scans. */
final class SkipChecks {
  private SkipChecks() {}

  /**
   * Each of {@code filters} in {@code select ... WHERE filter} (its table written {@code $t})
   * answers the same over table {@code files} as over {@code resident}; a wrong skip fails.
   */
  static void sameAsResident(GpuSession s, String select, String files, String resident, List<String> filters) {
    for (String f : filters) {
      String q = select + " WHERE " + f;
      try (VectorSchemaRoot want = s.query(q.replace("$t", resident)); VectorSchemaRoot got = s.query(q.replace("$t", files))) {
        assertNull(TpchAnswers.difference(TpchAnswers.rows(want), TpchAnswers.rows(got)), f);
      }
    }
  }

  /** How many chunk scans of {@code table} the plan of {@code SELECT SUM(column) FROM table WHERE filter} has. */
  static int scans(GpuSession s, String table, String column, String filter) {
    String plan = s.explain("SELECT SUM(" + column + ") FROM " + table + " WHERE " + filter);
    return plan.split("table=\\[\\[" + table + ", chunk ", -1).length - 1;
  }
}
