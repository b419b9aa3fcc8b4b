package dev.gpudf.kernels;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Row-at-a-time oracles built on Arrow's own {@code copyFromSafe}. */
final class ReferenceOps {
  private ReferenceOps() {}

  /** Rows {@code map} of the concatenation of {@code sources}, as a new root. */
  static VectorSchemaRoot rows(BufferAllocator a, List<VectorSchemaRoot> sources, int[] map) {
    VectorSchemaRoot first = sources.get(0);
    List<FieldVector> out = new ArrayList<>();
    for (int c = 0; c < first.getFieldVectors().size(); c++) {
      FieldVector v = first.getVector(c).getField().createVector(a);
      v.allocateNew();
      for (int i = 0; i < map.length; i++) {
        int r = map[i];
        for (VectorSchemaRoot s : sources) {
          if (r < s.getRowCount()) {
            v.copyFromSafe(r, i, s.getVector(c));
            break;
          }
          r -= s.getRowCount();
        }
      }
      v.setValueCount(map.length);
      out.add(v);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(out);
    root.setRowCount(map.length);
    return root;
  }

  static VectorSchemaRoot rows(BufferAllocator a, VectorSchemaRoot source, int[] map) {
    return rows(a, List.of(source), map);
  }
}
