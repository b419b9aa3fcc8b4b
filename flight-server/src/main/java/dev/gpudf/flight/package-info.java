/**
 * The Arrow Flight SQL server: {@link dev.gpudf.flight.GpudfFlightServer} serves a
 * {@link dev.gpudf.sql.GpuSession} through {@link dev.gpudf.flight.GpudfFlightSqlProducer} to the
 * Flight SQL JDBC driver, ADBC and pyarrow clients, with bearer tokens from basic auth
 * ({@link dev.gpudf.flight.Users}) and TLS.
 */
package dev.gpudf.flight;
