/** End-to-end tests across all modules; not written yet, see ARCHITECTURE.md. */
package dev.gpudf.it;
