/**
 * Tables that stay in their files until a query reads them: a {@link dev.gpudf.sql.files.ChunkSource}
 * describes a file's table from its metadata (names, types, rows per chunk) and reads the columns
 * a query needs one chunk at a time, so a scan holds one chunk in memory rather than the table.
 * A server's table file may carry an {@link dev.gpudf.sql.files.AppendLog} of the rows inserted
 * since it was written, which every loader applies. A Parquet source can also hand a column's
 * stored pages over as they are ({@link dev.gpudf.sql.files.ChunkSource#readEncoded}), for the
 * device to decompress and decode ({@link dev.gpudf.kernels.ParquetDecode}).
 */
package dev.gpudf.sql.files;
