package dev.gpudf.columnar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

class HostBitmapsTest {
  @Test
  void countsSetBitsAcrossWordAndByteEdges() {
    try (RootAllocator a = new RootAllocator(); ArrowBuf b = a.buffer(16)) {
      b.setZero(0, 16);
      b.setByte(0, 0b1010_0101);
      b.setByte(9, 0xFF);
      assertEquals(4, HostBitmaps.countSet(b, 8));
      assertEquals(2, HostBitmaps.countSet(b, 3));
      assertEquals(12, HostBitmaps.countSet(b, 128));
      assertEquals(5, HostBitmaps.countSet(b, 73));
      assertEquals(0, HostBitmaps.countSet(b, 0));
      assertThrows(UserException.class, () -> HostBitmaps.countSet(b, 129));
    }
  }

  @Test
  void nullCountAgreesWithArrow() {
    try (RootAllocator a = new RootAllocator()) {
      for (int rows : new int[] {0, 1, 31, 32, 33, 65, 64, 1000}) {
        for (Nulls nulls : new Nulls[] {Nulls.NONE, Nulls.every(3), Nulls.ALL}) {
          try (VectorSchemaRoot root = TestTables.allTypes(a, rows, nulls, rows)) {
            for (FieldVector v : root.getFieldVectors()) {
              assertEquals(v.getNullCount(), HostBitmaps.nullCount(v), v.getName() + " " + rows + " " + nulls);
            }
          }
        }
      }
    }
  }
}
