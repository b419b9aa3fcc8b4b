/**
 * The libcudf level of gpudf: the CUDA kernels' loader and launcher and eager operations on
 * {@link dev.gpudf.columnar.Column}s and {@link dev.gpudf.columnar.Table}s, each with a CPU twin
 * of the same contract.
 */
package dev.gpudf.kernels;
