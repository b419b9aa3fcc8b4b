package dev.gpudf.sql;

import java.util.List;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.schema.impl.AbstractTable;

/**
 * A catalog table as Calcite sees it during planning: a name, a row type and its row count (for
 * join order); either the whole table ({@code chunk} -1) or one of its chunks, which a chunked
 * table's scan becomes once the joins are ordered; and either all its columns or those a query
 * reads ({@link ScanColumns}), which are all that the scan then acquires.
 */
final class CatalogTable extends AbstractTable {
  private final String name;
  private final Catalog.Shape shape;
  private final int chunk;
  private final int[] columns;

  CatalogTable(String name, Catalog.Shape shape, int chunk) {
    this(name, shape, chunk, null);
  }

  private CatalogTable(String name, Catalog.Shape shape, int chunk, int[] columns) {
    this.name = name;
    this.shape = shape;
    this.chunk = chunk;
    this.columns = columns;
  }

  /** Whether this is one chunk of a chunked table's split scan, not the whole table. */
  boolean isChunk() {
    return chunk >= 0;
  }

  /** Chunk {@code chunk} of this table. */
  CatalogTable chunk(int chunk) {
    return new CatalogTable(name, shape, chunk, columns);
  }

  /** This table (or chunk) with only columns {@code columns} of the whole table, in that order. */
  CatalogTable project(int[] columns) {
    return new CatalogTable(name, shape, chunk, columns.clone());
  }

  /** The table's columns that a scan reads, or null for all of them. */
  int[] columns() {
    return columns == null ? null : columns.clone();
  }

  @Override
  public org.apache.calcite.schema.Statistic getStatistic() {
    return org.apache.calcite.schema.Statistics.of(rows(), List.of());
  }

  /** Rows of the whole table, or of this chunk. */
  long rows() {
    return chunk < 0 ? shape.rows() : shape.chunkRows().get(chunk);
  }

  String name() {
    return name;
  }

  /** How many chunks the table had when it was planned. */
  int chunks() {
    return shape.chunks();
  }

  /**
   * What the files' metadata says of this chunk's columns, in this table's column order (entries
   * null where unknown), or null: nothing known, or not one chunk.
   */
  List<dev.gpudf.formats.ValueRange> ranges() {
    if (chunk < 0 || shape.ranges() == null) {
      return null;
    }
    List<dev.gpudf.formats.ValueRange> all = shape.ranges().get(chunk);
    return columns == null ? all : java.util.Arrays.stream(columns).mapToObj(all::get).toList();
  }

  /**
   * At most how many distinct values column {@code column} (of this scan's columns) has in the
   * whole table, all chunks together: its rows, or for an integer or date column whose files give
   * every chunk's range, the values in it ({@link ColumnStats#span}).
   */
  double distinctBound(int column) {
    return ColumnStats.span(shape, tableColumn(column), true).orElse(shape.rows());
  }

  /** The table's name and column {@code column}'s (of this scan's columns): one name for every chunk's scan of it. */
  String columnName(int column) {
    return name + "." + shape.names().get(tableColumn(column));
  }

  private int tableColumn(int column) {
    return columns == null ? column : columns[column];
  }

  /** Which chunk this is, or -1 for the whole table. */
  int chunk() {
    return chunk;
  }

  @Override
  public RelDataType getRowType(RelDataTypeFactory f) {
    RelDataTypeFactory.Builder b = f.builder();
    int[] read = columns != null ? columns : java.util.stream.IntStream.range(0, shape.names().size()).toArray();
    for (int i : read) {
      b.add(shape.names().get(i), SqlTypes.toCalcite(f, shape.types().get(i)));
    }
    return b.build();
  }
}
