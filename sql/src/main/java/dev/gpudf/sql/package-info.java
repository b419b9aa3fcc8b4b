/**
 * gpudf's SQL layer: a {@link dev.gpudf.sql.GpuSession} plans SQL with Calcite (logical rewrites,
 * join order from measured distinct counts, then {@link dev.gpudf.sql.GpuRules}) into
 * {@link dev.gpudf.sql.GpuRel} operators that run on either backend.
 */
package dev.gpudf.sql;
