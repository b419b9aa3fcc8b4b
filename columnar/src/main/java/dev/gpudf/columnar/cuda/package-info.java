/**
 * The CUDA layer under the device tables: driver probing and error checks, device and primary
 * context, streams and events, the stream-ordered device memory pool, pinned host memory for
 * Arrow, host-device copies, and CUDA IPC export and mapping of device buffers. Nothing here
 * knows about columns.
 */
package dev.gpudf.columnar.cuda;
