/** End-to-end tests across all modules: the sqllogictest corpus through the {@code jdbc:gpudf:} driver. */
package dev.gpudf.it;
