/** SQL and DataFrame layer (Calcite planning into Gpu* operators); not built yet, see ARCHITECTURE.md. */
package dev.gpudf.sql;
