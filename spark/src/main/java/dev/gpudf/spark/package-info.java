/**
 * gpudf as an Apache Spark plugin: {@link dev.gpudf.spark.GpudfExtensions} replaces the physical
 * operators of a Spark SQL plan that gpudf can run (filter, projection, partial aggregate, sort,
 * top-N, shuffled and broadcast hash joins) with gpudf ones, and leaves the rest to Spark;
 * {@link dev.gpudf.spark.GpudfPlugin} starts gpudf's backend in each executor, on the GPU Spark's
 * resource scheduling gave it. Batches cross between Spark and gpudf as Arrow; on the GPU a gpudf
 * operator's result stays on the device ({@link dev.gpudf.spark.DeviceBatch}) for the next one.
 */
package dev.gpudf.spark;
