package dev.gpudf.kernels;

import dev.gpudf.columnar.DeviceColumn;

/**
 * The layout check of a device column that every kernel relies on without checking it: a string
 * column's offsets start at 0 and end at its byte count ({@link DeviceColumn}). Debug checks and
 * tests use it to name the producer of a broken column instead of a later reader of its bytes.
 */
public final class DeviceLayout {
  private DeviceLayout() {}

  /** What is wrong with {@code c}'s layout, or null when nothing is (reads two offsets from the device). */
  public static String problem(Exec exec, DeviceColumn c) {
    if (c.offsets() == null) {
      return null;
    }
    int first = exec.readInt(c.offsets(), 0);
    int last = exec.readInt(c.offsets(), 4L * c.rowCount());
    return first == 0 && last == c.data().size() ? null
        : "breaks the string layout: offsets run from " + first + " to " + last + " over " + c.data().size() + " bytes";
  }
}
