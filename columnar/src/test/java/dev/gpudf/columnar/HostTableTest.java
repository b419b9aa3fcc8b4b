package dev.gpudf.columnar;

import static dev.gpudf.columnar.testing.TestTables.allTypes;
import static dev.gpudf.columnar.testing.TestTables.assertSameData;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The CPU backend's table: Arrow in, Arrow out, buffers shared; every test checks for leaks. */
class HostTableTest {
  private final RootAllocator allocator = new RootAllocator();

  @AfterEach
  void noLeaks() {
    allocator.close(); // throws if any buffer is still allocated
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000})
  void roundTripsEveryTypeAndNullPattern(int rows) {
    for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
      try (VectorSchemaRoot source = allTypes(allocator, rows, nulls, rows);
          HostTable table = HostTable.fromArrow(source);
          VectorSchemaRoot back = table.toArrow(allocator)) {
        assertEquals(13, table.columnCount());
        assertEquals(rows, table.rowCount());
        assertSameData(source, back);
      }
    }
  }

  @Test
  void tenMillionRows() {
    try (VectorSchemaRoot source = allTypes(allocator, 10_000_000, Nulls.every(7), 7);
        HostTable table = HostTable.fromArrow(source);
        VectorSchemaRoot back = table.toArrow(allocator)) {
      assertSameData(source, back);
    }
  }

  @Test
  void slicedVectors() {
    try (VectorSchemaRoot source = allTypes(allocator, 200, Nulls.every(5), 3)) {
      for (int[] range : new int[][] {{3, 50}, {8, 64}, {13, 0}, {199, 1}}) {
        try (VectorSchemaRoot sliced = TestTables.slice(source, range[0], range[1]);
            HostTable table = HostTable.fromArrow(sliced);
            VectorSchemaRoot back = table.toArrow(allocator)) {
          assertSameData(sliced, back);
        }
      }
    }
  }

  @Test
  void sharesBuffersAndOutlivesItsSource() {
    VectorSchemaRoot source = allTypes(allocator, 100, Nulls.every(4), 9);
    long before = allocator.getAllocatedMemory();
    HostTable table = HostTable.fromArrow(source);
    // sharing may add an all-valid bitmap for null-free columns, but never copies the data
    assertTrue(allocator.getAllocatedMemory() - before < 1024, "data was copied");
    try (VectorSchemaRoot expected = allTypes(allocator, 100, Nulls.every(4), 9)) {
      source.close();
      try (VectorSchemaRoot back = table.toArrow(allocator)) {
        assertSameData(expected, back);
      }
    } finally {
      table.close();
    }
  }

  @Test
  void unsupportedColumnIsNamedAndNothingLeaks() {
    try (VectorSchemaRoot root = TestTables.withListColumn(allocator)) {
      NotSupportedException e = assertThrows(NotSupportedException.class, () -> HostTable.fromArrow(root));
      assertTrue(e.getMessage().contains("'tags'") && e.getMessage().contains("List"), e.getMessage());
    }
  }

  @Test
  void mismatchedLengthsAreUserErrors() {
    try (VectorSchemaRoot root = allTypes(allocator, 10, Nulls.NONE, 1)) {
      root.getVector("i32").setValueCount(5);
      UserException e = assertThrows(UserException.class, () -> HostTable.fromArrow(root));
      assertTrue(e.getMessage().contains("'i32'"), e.getMessage());
    }
  }

  @Test
  void columnLookupAndOwnership() {
    try (VectorSchemaRoot source = allTypes(allocator, 10, Nulls.NONE, 1)) {
      HostTable table = HostTable.fromArrow(source);
      assertEquals(DataType.STRING, table.column("str").type());
      assertThrows(UserException.class, () -> table.column("nope"));
      HostColumn kept = table.column("i64");
      kept.retain();
      table.close();
      assertEquals(10, kept.vector().getValueCount());
      kept.close();
      assertThrows(IllegalStateException.class, table::close);
    }
  }
}
