package dev.gpudf.columnar.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class or method that needs a CUDA device: tagged {@code gpu}, and skipped (shown
 * as skipped, with the reason) where no device is usable.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(GpuCondition.class)
public @interface RequiresGpu {}
