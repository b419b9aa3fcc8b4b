package dev.gpudf.sql;

import dev.gpudf.columnar.DataType;
import java.util.List;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rel.type.RelDataTypeFactory;
import org.apache.calcite.schema.impl.AbstractTable;

/** A catalog table as Calcite sees it during planning: a name and a row type. */
final class CatalogTable extends AbstractTable {
  private final String name;
  private final List<String> columns;
  private final List<DataType> types;

  CatalogTable(String name, List<String> columns, List<DataType> types) {
    this.name = name;
    this.columns = columns;
    this.types = types;
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
