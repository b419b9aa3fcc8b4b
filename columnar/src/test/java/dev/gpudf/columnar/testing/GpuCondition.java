package dev.gpudf.columnar.testing;

import dev.gpudf.columnar.cuda.Cuda;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Disables {@link RequiresGpu} tests, with the driver's reason, where CUDA is unusable. */
public final class GpuCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Cuda.Availability a = Cuda.availability();
    return a.available()
        ? ConditionEvaluationResult.enabled("CUDA device present")
        : ConditionEvaluationResult.disabled("SKIPPED (no GPU): " + a.reason());
  }
}
