/** Test support shared by every module's tests: GPU test gating and generated Arrow tables. */
package dev.gpudf.columnar.testing;
