/**
 * File formats read without a query engine around them: a Parquet file's footer ({@link
 * dev.gpudf.formats.ParquetFooter}: row groups, statistics, where each column chunk's pages lie),
 * its column chunks' stored pages for the device's decoder ({@link dev.gpudf.formats.ParquetPages},
 * read by several threads at once: {@link dev.gpudf.formats.RangeReads}), and the row groups of a
 * byte range of a file ({@link dev.gpudf.formats.ParquetRowGroups}). The SQL engine's file tables
 * ({@code dev.gpudf.sql.files}) and the Spark plugin's Parquet scan both read through it. Every
 * byte of a file is untrusted: lengths and offsets are checked against the file before use.
 */
package dev.gpudf.formats;
