/**
 * gpudf's SQL layer: a {@link dev.gpudf.sql.GpuSession} plans SQL with Calcite into
 * {@link dev.gpudf.sql.GpuRel} operators ({@link dev.gpudf.sql.GpuRules}) that run on either backend.
 */
package dev.gpudf.sql;
