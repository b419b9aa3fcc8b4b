package dev.gpudf.sql;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.externalize.RelWriterImpl;
import org.apache.calcite.sql.SqlExplainLevel;
import org.apache.calcite.util.Pair;

/**
 * EXPLAIN text: Calcite's indented plan, one operator a line, except that an operator several
 * parents read (the input every chunk branch of a per-chunk join shares, which runs once) is
 * written in full once, marked {@code shared=[#n]}, and as one line {@code Name(shared=[#n])} at
 * its other readers. Written as a tree, TPC-H q21 over 8 lineitem chunks took 22,595 lines.
 */
final class PlanText extends RelWriterImpl {
  private final Map<RelNode, Integer> readers = new IdentityHashMap<>();
  private final Map<RelNode, Integer> labels = new IdentityHashMap<>();

  private PlanText(PrintWriter pw, RelNode root) {
    super(pw, SqlExplainLevel.EXPPLAN_ATTRIBUTES, false);
    countReaders(root);
  }

  /** The text of plan {@code root}. */
  static String of(RelNode root) {
    StringWriter out = new StringWriter();
    try (PrintWriter pw = new PrintWriter(out)) {
      root.explain(new PlanText(pw, root));
    }
    return out.toString();
  }

  private void countReaders(RelNode node) {
    for (RelNode input : node.getInputs()) {
      if (readers.merge(input, 1, Integer::sum) == 1) {
        countReaders(input);
      }
    }
  }

  @Override
  protected void explain_(RelNode rel, List<Pair<String, Object>> values) {
    Integer label = labels.get(rel);
    if (label != null) {
      pw.println(spacer + rel.getRelTypeName() + "(shared=[#" + label + "])");
      return;
    }
    if (readers.getOrDefault(rel, 0) > 1) {
      label = labels.size() + 1;
      labels.put(rel, label);
      List<Pair<String, Object>> marked = new ArrayList<>(values);
      marked.add(Pair.of("shared", "#" + label));
      super.explain_(rel, marked);
      return;
    }
    super.explain_(rel, values);
  }
}
