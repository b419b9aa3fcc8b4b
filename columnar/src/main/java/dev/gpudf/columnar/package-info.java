/**
 * gpudf's columnar core: {@link dev.gpudf.columnar.DataType}, reference-counted
 * {@link dev.gpudf.columnar.Column}s and {@link dev.gpudf.columnar.Table}s on the host (Arrow
 * vectors, the CPU backend; a string column there may be held as dictionary codes,
 * {@link dev.gpudf.columnar.StringCodes}, until read) and the device (the GPU backend), and the
 * copies between them.
 */
package dev.gpudf.columnar;
