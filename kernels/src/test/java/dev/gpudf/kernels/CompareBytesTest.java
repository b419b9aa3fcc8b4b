package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** {@link CpuEval#compareBytes}, eight bytes at a time, orders as unsigned bytes with a prefix first. */
class CompareBytesTest {
  @Test
  void agreesWithUnsignedArrayOrder() {
    SplittableRandom r = new SplittableRandom(5);
    try (RootAllocator a = new RootAllocator(); ArrowBuf x = a.buffer(64); ArrowBuf y = a.buffer(64)) {
      for (int t = 0; t < 200_000; t++) {
        int lx = r.nextInt(0, 40);
        byte[] bx = new byte[lx];
        r.nextBytes(bx);
        // mostly a shared prefix, so the first difference falls inside a word and in the tail
        byte[] by = Arrays.copyOf(bx, r.nextInt(0, 40));
        if (by.length > 0 && r.nextBoolean()) {
          by[r.nextInt(by.length)] = (byte) r.nextInt(256);
        }
        x.setBytes(0, bx);
        y.setBytes(0, by);
        int want = Integer.signum(Arrays.compareUnsigned(bx, by));
        assertEquals(want, CpuEval.compareBytes(x.memoryAddress(), bx.length, y.memoryAddress(), by.length),
            Arrays.toString(bx) + " " + Arrays.toString(by));
      }
    }
  }
}
