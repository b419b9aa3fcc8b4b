package dev.gpudf.columnar;

/** The logical types gpudf stores; {@link DataType} adds their parameters. */
public enum TypeId {
  BOOL, INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, DECIMAL, DATE, TIMESTAMP, STRING
}
