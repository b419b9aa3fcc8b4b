/**
 * Device tables shared with other libraries in this process without a copy through host memory:
 * the Arrow C Device Data Interface, one batch ({@link dev.gpudf.sql.interop.DeviceArrays}) or a
 * stream of them ({@link dev.gpudf.sql.interop.DeviceArrayStreams}, whose C callbacks live in
 * {@code src/main/native}).
 */
package dev.gpudf.sql.interop;
