/** The {@code gpudf} command line (picocli). */
package dev.gpudf.cli;
