/**
 * gpudf as an Apache Spark plugin: {@link dev.gpudf.spark.GpudfExtensions} replaces the physical
 * operators of a Spark SQL plan that gpudf can run with gpudf ones (filter and projection so far),
 * and leaves the rest to Spark; {@link dev.gpudf.spark.GpudfPlugin} starts gpudf's backend in each
 * executor. Batches cross between Spark and gpudf as Arrow.
 */
package dev.gpudf.spark;
