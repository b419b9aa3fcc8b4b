/**
 * gpudf as an Apache Spark plugin: {@link dev.gpudf.spark.GpudfExtensions} replaces the physical
 * operators of a Spark SQL plan that gpudf can run (Parquet scan, filter, projection, partial
 * aggregate, sort, top-N, shuffled and broadcast hash joins, and the shuffles above them, as Arrow
 * through Spark's shuffle files) with gpudf ones, and leaves the rest to Spark; the scan reads Spark's splits as stored pages that gpudf decodes (through {@code
 * dev.gpudf.formats}), and Spark's reader reads the files gpudf's does not take;
 * {@link dev.gpudf.spark.GpudfPlugin} starts gpudf's backend in each executor, on the GPU Spark's
 * resource scheduling gave it. Batches cross between Spark and gpudf as Arrow; on the GPU a gpudf
 * operator's result stays on the device ({@link dev.gpudf.spark.DeviceBatch}) for the next one.
 */
package dev.gpudf.spark;
