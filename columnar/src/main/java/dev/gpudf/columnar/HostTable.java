package dev.gpudf.columnar;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.util.TransferPair;

/**
 * A table in host memory over Arrow vectors: the CPU backend's table, and the staging point for
 * device transfers. Made from Arrow without copying: its vectors share the source buffers by
 * reference count, so the source may be closed independently.
 */
public final class HostTable extends Table<HostColumn> {
  /** Takes ownership of {@code columns}. */
  public HostTable(List<String> names, List<HostColumn> columns, int rowCount) {
    super(names, columns, rowCount);
  }

  /**
   * A table sharing {@code root}'s buffers (no copy). The caller still owns {@code root} and
   * closes it when it likes; the new table is the caller's to close too. Throws
   * {@link dev.gpudf.columnar.error.NotSupportedException} naming the first column of an
   * unsupported type, before anything is shared.
   */
  public static HostTable fromArrow(VectorSchemaRoot root) {
    int rows = root.getRowCount();
    ArrowTypes.checkBatch(root);
    List<String> names = new ArrayList<>();
    List<HostColumn> columns = new ArrayList<>();
    try {
      for (FieldVector v : root.getFieldVectors()) {
        int nulls = HostBitmaps.nullCount(v);
        columns.add(new HostColumn(share(v.getName(), v, nulls), nulls));
        names.add(v.getName());
      }
    } catch (RuntimeException e) {
      columns.forEach(HostColumn::close);
      throw e;
    }
    return new HostTable(names, columns, rows);
  }

  /**
   * A root sharing this table's buffers (nothing is copied), accounted from now on to {@code
   * allocator} when it shares the buffers' root allocator (a query's own allocator can then close
   * with the query while its rows live on), to the buffers' own allocator otherwise.
   */
  @Override
  public VectorSchemaRoot toArrow(BufferAllocator allocator) {
    List<FieldVector> vectors = new ArrayList<>();
    try {
      for (int i = 0; i < columns().size(); i++) {
        HostColumn c = columns().get(i);
        FieldVector shared = share(names().get(i), c.vector(), c.nullCount());
        if (shared.getAllocator() != allocator && shared.getAllocator().getRoot() == allocator.getRoot()) {
          // a transfer moves every buffer's accounting (a split at 0 would leave the validity buffer behind)
          try (FieldVector from = shared) {
            TransferPair move = from.getTransferPair(allocator);
            move.transfer();
            shared = (FieldVector) move.getTo();
          }
        }
        vectors.add(shared);
      }
    } catch (RuntimeException e) {
      vectors.forEach(FieldVector::close);
      throw e;
    }
    return new VectorSchemaRoot(vectors);
  }

  // A new vector, named as the table names the column, over the same buffers, accounted to the source's allocator.
  private static FieldVector share(String name, FieldVector source, int nullCount) {
    Field f = source.getField();
    FieldVector copy = new Field(name, f.getFieldType(), f.getChildren()).createVector(source.getAllocator());
    copy.loadFieldBuffers(new ArrowFieldNode(source.getValueCount(), nullCount), source.getFieldBuffers());
    return copy;
  }
}
