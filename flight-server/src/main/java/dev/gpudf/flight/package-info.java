/**
 * The Arrow Flight SQL server: {@link dev.gpudf.flight.GpudfFlightServer} serves a
 * {@link dev.gpudf.sql.GpuSession} through {@link dev.gpudf.flight.GpudfFlightSqlProducer} to the
 * Flight SQL JDBC driver, ADBC and pyarrow clients, with bearer tokens from basic auth
 * ({@link dev.gpudf.flight.Users}) and TLS; and the device hand-off
 * ({@link dev.gpudf.flight.DeviceHandOff}), by which a result stays in GPU memory and another
 * process maps it through CUDA IPC handles under a lease.
 */
package dev.gpudf.flight;
