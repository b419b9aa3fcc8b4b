/**
 * The in-process JDBC driver {@code jdbc:gpudf:}, built on Apache Calcite Avatica: a connection
 * owns one {@link dev.gpudf.sql.GpuSession} whose catalog is a directory of data files.
 */
package dev.gpudf.sql.jdbc;
