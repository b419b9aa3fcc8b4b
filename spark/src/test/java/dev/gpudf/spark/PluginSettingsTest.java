package dev.gpudf.spark;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A bad gpudf setting stops Spark from starting, with a message naming the setting and its value
 * (the plugin starts gpudf's backend as the executor starts, not at its first task).
 */
class PluginSettingsTest {
  @ParameterizedTest
  @CsvSource({"spark.gpudf.backend, tpu", "spark.gpudf.concurrentTasks, many", "spark.gpudf.concurrentTasks, -1",
      "spark.gpudf.pinnedHostMemory, maybe"})
  void aBadSettingIsNamed(String setting, String value) {
    Exception e = assertThrows(Exception.class,
        () -> LocalSpark.builder("gpudf-settings", "cpu").config(setting, value).getOrCreate().stop());
    String all = messages(e);
    assertTrue(all.contains(setting + "=" + value), all);
  }

  /** The messages of {@code e} and its causes, one a line. */
  private static String messages(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      b.append(t.getMessage()).append('\n');
    }
    return b.toString();
  }
}
