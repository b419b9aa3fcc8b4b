package dev.gpudf.spark;

import java.util.Map;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * {@code spark.plugins=dev.gpudf.spark.GpudfPlugin}: starts gpudf's backend ({@value
 * GpudfBackend#BACKEND_CONF}, {@code cpu} by default) in each executor as it starts, so that a bad
 * setting fails the executor at once rather than its first task, and stops it with the executor.
 */
public final class GpudfPlugin implements SparkPlugin {
  /** None: the driver needs nothing started (in local mode it runs the executor's plugin too). */
  @Override
  public DriverPlugin driverPlugin() {
    return null;
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      @Override
      public void init(PluginContext ctx, Map<String, String> extraConf) {
        GpudfBackend.start(ctx.conf().get(GpudfBackend.BACKEND_CONF, "cpu"));
      }

      @Override
      public void shutdown() {
        GpudfBackend.stop();
      }
    };
  }
}
