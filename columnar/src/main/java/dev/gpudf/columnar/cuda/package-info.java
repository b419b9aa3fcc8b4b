/**
 * The CUDA layer under the device tables: driver probing and error checks, device and primary
 * context, streams and events, the stream-ordered device memory pool, pinned host memory for
 * Arrow, and host-device copies. Nothing here knows about columns.
 */
package dev.gpudf.columnar.cuda;
