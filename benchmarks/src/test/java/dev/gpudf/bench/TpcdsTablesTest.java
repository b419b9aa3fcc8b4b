package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Generating TPC-DS in parallel parts gives the same tables as generating each in one part: every
 * row of every part, none twice (the generator takes a part's first and last row number; passing
 * a count once made every part after the first empty).
 */
class TpcdsTablesTest {
  @Test
  void partsMakeTheSameTablesAsOnePart() {
    try (RootAllocator a = new RootAllocator()) {
      Map<String, String> whole = tables(a, Long.MAX_VALUE);
      Map<String, String> parts = tables(a, 300);
      assertEquals(whole.keySet(), parts.keySet());
      java.util.List<String> differ = new java.util.ArrayList<>();
      for (String t : whole.keySet()) {
        java.util.List<String> w = whole.get(t).lines().toList();
        java.util.List<String> p = parts.get(t).lines().toList();
        if (!w.equals(p)) {
          int i = 0;
          while (i < Math.min(w.size(), p.size()) && w.get(i).equals(p.get(i))) {
            i++;
          }
          differ.add(t + " (" + w.size() + " vs " + p.size() + " lines, first difference at line " + i + ":\n  "
              + (i < w.size() ? w.get(i) : "-") + "\n  " + (i < p.size() ? p.get(i) : "-") + ")");
        }
      }
      assertEquals(java.util.List.of(), differ);
      assertTrue(whole.get("customer").lines().count() > 1000, "SF0.01 has 1,000 customers: " + whole.get("customer").lines().count());
    }
  }

  private static Map<String, String> tables(RootAllocator a, long partRows) {
    Map<String, String> out = new TreeMap<>();
    TpcdsTables.generate(a, 0.01, 2, partRows, (name, rows) -> { }, (name, root) -> {
      try (VectorSchemaRoot r = root) {
        out.put(name, r.contentToTSVString());
      }
    });
    return out;
  }
}
