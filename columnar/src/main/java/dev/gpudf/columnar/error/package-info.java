/** Typed errors shared by every gpudf layer: user error, not supported, internal, device fatal, out of memory. */
package dev.gpudf.columnar.error;
