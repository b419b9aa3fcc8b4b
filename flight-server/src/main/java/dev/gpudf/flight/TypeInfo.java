package dev.gpudf.flight;

import java.sql.Types;
import java.util.List;

/** The SQL types gpudf stores, as GetXdbcTypeInfo reports them: name, JDBC type code, column size (0: none). */
record TypeInfo(String name, int jdbcType, int size) {
  static final List<TypeInfo> ALL = List.of(
      new TypeInfo("BOOLEAN", Types.BOOLEAN, 1),
      new TypeInfo("TINYINT", Types.TINYINT, 3),
      new TypeInfo("SMALLINT", Types.SMALLINT, 5),
      new TypeInfo("INTEGER", Types.INTEGER, 10),
      new TypeInfo("BIGINT", Types.BIGINT, 19),
      new TypeInfo("REAL", Types.REAL, 7),
      new TypeInfo("DOUBLE", Types.DOUBLE, 15),
      new TypeInfo("DECIMAL", Types.DECIMAL, 38),
      new TypeInfo("DATE", Types.DATE, 10),
      new TypeInfo("TIMESTAMP", Types.TIMESTAMP, 29),
      new TypeInfo("VARCHAR", Types.VARCHAR, 0));
}
