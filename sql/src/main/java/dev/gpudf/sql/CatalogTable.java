package dev.gpudf.sql;

import java.util.List;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.schema.impl.AbstractTable;

/**
 * A catalog table as Calcite sees it during planning: a name, a row type and its row count (for
 * join order); either the whole table ({@code chunk} -1) or one of its chunks, which a chunked
 * table's scan becomes once the joins are ordered.
 */
final class CatalogTable extends AbstractTable {
  private final String name;
  private final Catalog.Shape shape;
  private final int chunk;

  CatalogTable(String name, Catalog.Shape shape, int chunk) {
    this.name = name;
    this.shape = shape;
    this.chunk = chunk;
  }

  /** Chunk {@code chunk} of this table. */
  CatalogTable chunk(int chunk) {
    return new CatalogTable(name, shape, chunk);
  }

  @Override
  public org.apache.calcite.schema.Statistic getStatistic() {
    return org.apache.calcite.schema.Statistics.of(chunk < 0 ? shape.rows() : shape.chunkRows().get(chunk), List.of());
  }

  String name() {
    return name;
  }

  /** How many chunks the table had when it was planned. */
  int chunks() {
    return shape.chunks();
  }

  /** Which chunk this is, or -1 for the whole table. */
  int chunk() {
    return chunk;
  }

  @Override
  public RelDataType getRowType(RelDataTypeFactory f) {
    RelDataTypeFactory.Builder b = f.builder();
    for (int i = 0; i < shape.names().size(); i++) {
      b.add(shape.names().get(i), SqlTypes.toCalcite(f, shape.types().get(i)));
    }
    return b.build();
  }
}
