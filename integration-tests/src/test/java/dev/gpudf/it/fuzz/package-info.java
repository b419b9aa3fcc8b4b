/**
 * The SQL fuzzer: random tables and queries ({@code QueryGenerator}) whose answers gpudf must
 * give as DuckDB does, and as itself does when a filter is split three ways ({@code SqlFuzzTest}).
 */
package dev.gpudf.it.fuzz;
