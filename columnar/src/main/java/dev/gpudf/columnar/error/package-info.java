/**
 * Typed errors shared by every gpudf layer: user error, not supported, internal, device fatal, out
 * of memory, a query past its own memory limit, a cancelled query.
 */
package dev.gpudf.columnar.error;
