package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class RefCountedTest {
  static final class Counted extends RefCounted {
    int released;

    @Override
    protected void release() {
      released++;
    }
  }

  @Test
  void lastCloseReleasesOnce() {
    Counted c = new Counted();
    c.retain();
    c.close();
    assertEquals(0, c.released);
    c.close();
    assertEquals(1, c.released);
    assertEquals(0, c.refCount());
  }

  @Test
  void closingPastZeroThrows() {
    Counted c = new Counted();
    c.close();
    assertThrows(IllegalStateException.class, c::close);
    assertThrows(IllegalStateException.class, c::retain);
    assertEquals(1, c.released);
  }
}
