package dev.gpudf.spark;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=dev.gpudf.spark.GpudfExtensions}: adds {@link GpudfOverrides} to the
 * columnar rules, which Spark runs on each physical plan before it puts row/column transitions
 * between operators.
 */
public final class GpudfExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectColumnar(session -> new ColumnarRule() {
      @Override
      public Rule<SparkPlan> preColumnarTransitions() {
        return new GpudfOverrides();
      }
    });
    return BoxedUnit.UNIT;
  }
}
