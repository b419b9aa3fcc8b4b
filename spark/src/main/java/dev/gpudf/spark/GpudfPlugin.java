package dev.gpudf.spark;

import dev.gpudf.columnar.error.UserException;
import java.util.Map;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * {@code spark.plugins=dev.gpudf.spark.GpudfPlugin}: starts gpudf's backend ({@value
 * GpudfBackend#BACKEND_CONF}, {@code cpu} by default) in each executor as it starts, so that a bad
 * setting fails the executor at once rather than its first task, and stops it with the executor.
 * The {@code gpu} backend takes the first GPU Spark's resource scheduling gave the executor
 * ({@code spark.executor.resource.gpu.amount} with a discovery script), or GPU 0 where none was
 * given (local mode).
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
        ResourceInformation gpus = ctx.resources().get("gpu");
        int ordinal = gpus == null || gpus.addresses().length == 0 ? 0 : parse(gpus.addresses()[0]);
        String cap = ctx.conf().get(GpudfBackend.CONCURRENT_TASKS_CONF, "0");
        int concurrentTasks;
        try {
          concurrentTasks = Integer.parseInt(cap.trim());
        } catch (NumberFormatException e) {
          throw new UserException(GpudfBackend.CONCURRENT_TASKS_CONF + "=" + cap + " is not a number of tasks", e);
        }
        String pinned = ctx.conf().get(GpudfBackend.PINNED_CONF, "true").trim();
        if (!pinned.equals("true") && !pinned.equals("false")) {
          throw new UserException(GpudfBackend.PINNED_CONF + "=" + pinned + " is neither true nor false");
        }
        GpudfBackend.start(ctx.conf().get(GpudfBackend.BACKEND_CONF, "cpu"), ordinal, concurrentTasks,
            Boolean.parseBoolean(pinned));
      }

      @Override
      public void shutdown() {
        GpudfBackend.stop();
      }
    };
  }

  /** A GPU address as Spark's discovery script gave it: the device's ordinal. */
  private static int parse(String address) {
    try {
      return Integer.parseInt(address.trim());
    } catch (NumberFormatException e) {
      throw new UserException("the GPU address " + address + " Spark gave this executor is not a device ordinal", e);
    }
  }
}
