/** Benchmarks run on a GPU host; each prints raw lines and a summary, saved under benchmarks/results/. */
package dev.gpudf.bench;
