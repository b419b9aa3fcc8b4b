/**
 * Device tables shared with other libraries in this process without a copy through host memory:
 * the Arrow C Device Data Interface ({@link dev.gpudf.sql.interop.DeviceArrays}).
 */
package dev.gpudf.sql.interop;
