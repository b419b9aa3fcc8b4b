package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;
import java.util.List;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.schema.impl.AbstractTable;

/** A catalog table as Calcite sees it during planning: a name, a row type and its row count (for join order). */
final class CatalogTable extends AbstractTable {
  private final String name;
  private final List<String> columns;
  private final List<DataType> types;
  private final double rows;

  CatalogTable(String name, List<String> columns, List<DataType> types, double rows) {
    this.name = name;
    this.columns = columns;
    this.types = types;
    this.rows = rows;
  }

  @Override
  public org.apache.calcite.schema.Statistic getStatistic() {
    return org.apache.calcite.schema.Statistics.of(rows, List.of());
  }

  String name() {
    return name;
  }

  @Override
  public RelDataType getRowType(RelDataTypeFactory f) {
    RelDataTypeFactory.Builder b = f.builder();
    for (int i = 0; i < columns.size(); i++) {
      b.add(columns.get(i), SqlTypes.toCalcite(f, types.get(i)));
    }
    return b.build();
  }
}
