package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;

/**
 * How a column's values are laid out on the device, which selects the kernel instantiation
 * (the {@code _i32}, {@code _f64}, ... suffix of a kernel name).
 */
enum PhysicalType {
  I8(1), I16(2), I32(4), I64(8), F32(4), F64(8), D128(16), BITS(0), STRING(0);

  final int deviceWidth;

  PhysicalType(int deviceWidth) {
    this.deviceWidth = deviceWidth;
  }

  static PhysicalType of(DataType t) {
    return switch (t.id()) {
      case BOOL -> BITS;
      case INT8 -> I8;
      case INT16 -> I16;
      case INT32, DATE -> I32;
      case INT64, TIMESTAMP -> I64;
      case FLOAT32 -> F32;
      case FLOAT64 -> F64;
      case DECIMAL -> t.isDecimal64() ? I64 : D128;
      case STRING -> STRING;
    };
  }

  boolean isFloat() {
    return this == F32 || this == F64;
  }

  /** Kernel name suffix. */
  String suffix() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
