package dev.gpudf.columnar.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a GPU test too slow for the {@code gpu} suite that runs whole in one device call (inputs
 * of millions of rows checked against a CPU twin): tagged {@code gpu-heavy} instead, run on its
 * own ({@code scripts/gpu-run.sh heavy}), and skipped, visibly, where no device is usable.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu-heavy")
@ExtendWith(GpuCondition.class)
public @interface HeavyGpu {}
