package dev.gpudf.columnar;

import static dev.gpudf.columnar.testing.TestTables.allTypes;
import static dev.gpudf.columnar.testing.TestTables.assertSameData;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import java.math.BigDecimal;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Host -> device -> host for every type; each test checks that no device or host buffer leaked. */
@RequiresGpu
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeviceTableTest {
  private Gpu gpu;
  private CudaStream stream;
  private BufferAllocator pageable;
  private BufferAllocator pinned;

  @BeforeAll
  void open() {
    gpu = Gpu.open(0, 8L << 30, 256L << 20);
    stream = gpu.newStream();
  }

  @AfterAll
  void close() {
    stream.close();
    gpu.close(); // throws if a device buffer or pinned buffer leaked
  }

  @org.junit.jupiter.api.BeforeEach
  void allocators() {
    pageable = new RootAllocator();
    pinned = gpu.pinnedAllocator().newChildAllocator("test", 0, Long.MAX_VALUE);
  }

  @AfterEach
  void noLeaks() {
    pageable.close();
    pinned.close();
    assertEquals(0, gpu.pool().stats().liveBuffers(), "live device buffers after the test");
  }

  private void roundTrip(VectorSchemaRoot source, BufferAllocator into) {
    try (DeviceTable table = DeviceTable.fromArrow(gpu, source, stream);
        VectorSchemaRoot back = table.toArrow(into, stream)) {
      assertEquals(source.getRowCount(), table.rowCount());
      assertSameData(source, back);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 65, 1000, 100_003})
  void everyTypeEveryNullPatternPageableAndPinned(int rows) {
    for (Nulls nulls : List.of(Nulls.NONE, Nulls.every(3), Nulls.ALL)) {
      for (BufferAllocator from : List.of(pageable, pinned)) {
        try (VectorSchemaRoot source = allTypes(from, rows, nulls, rows + 17)) {
          roundTrip(source, pageable);
          roundTrip(source, pinned);
        }
      }
    }
  }

  @Test
  void tenMillionRows() {
    try (VectorSchemaRoot source = allTypes(pinned, 10_000_000, Nulls.every(11), 5)) {
      roundTrip(source, pinned);
      roundTrip(source, pageable);
    }
  }

  @Test
  void slicedVectors() {
    try (VectorSchemaRoot source = allTypes(pageable, 500, Nulls.every(6), 2)) {
      for (int[] range : new int[][] {{3, 65}, {8, 100}, {13, 0}, {499, 1}, {1, 498}}) {
        try (VectorSchemaRoot sliced = TestTables.slice(source, range[0], range[1])) {
          roundTrip(sliced, pageable);
        }
      }
    }
  }

  @Test
  void nullFreeColumnsCarryNoValidityOnTheDevice() {
    try (VectorSchemaRoot source = allTypes(pageable, 100, Nulls.NONE, 1);
        DeviceTable table = DeviceTable.fromArrow(gpu, source, stream)) {
      assertNull(table.column("i32").validity());
      assertNotNull(table.column("str").offsets());
      assertEquals(8, table.column("dec18").type().byteWidth());
    }
  }

  @Test
  void decimalBeyondItsPrecisionIsRejected() {
    try (DecimalVector d = new DecimalVector("price", pageable, 18, 0)) {
      d.allocateNew(2);
      d.setSafe(0, BigDecimal.ONE);
      // 10^20, 21 digits in a DECIMAL(18, 0): Arrow's setters refuse it, foreign writers need not
      d.setSafe(1, BigDecimal.ONE);
      d.getDataBuffer().setLong(16, 0x6BC75E2D63100000L);
      d.getDataBuffer().setLong(24, 5L);
      d.setValueCount(2);
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(d))) {
        root.setRowCount(2);
        UserException e = assertThrows(UserException.class, () -> DeviceTable.fromArrow(gpu, root, stream));
        assertTrue(e.getMessage().contains("'price'") && e.getMessage().contains("row 1"), e.getMessage());
      }
    }
  }

  @Test
  void aNullSlotMayHoldAnyDecimalBits() {
    try (DecimalVector d = new DecimalVector("price", pageable, 15, 2)) {
      d.allocateNew(2);
      d.setSafe(0, new BigDecimal("12.34"));
      d.getDataBuffer().setLong(16, 0x6BC75E2D63100000L);
      d.getDataBuffer().setLong(24, 5L);
      d.setNull(1);
      d.setValueCount(2);
      VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(d));
      root.setRowCount(2);
      try (DeviceTable t = DeviceTable.fromArrow(gpu, root, stream);
          VectorSchemaRoot back = t.toArrow(pageable, stream)) {
        DecimalVector got = (DecimalVector) back.getVector(0);
        assertEquals(new BigDecimal("12.34"), got.getObject(0));
        assertTrue(got.isNull(1));
      }
    }
  }

  @Test
  void unsupportedTypeFailsBeforeAnyDeviceAllocation() {
    long allocationsBefore = gpu.pool().stats().allocationCount();
    try (VectorSchemaRoot root = TestTables.withListColumn(pageable)) {
      NotSupportedException e = assertThrows(NotSupportedException.class, () -> DeviceTable.fromArrow(gpu, root, stream));
      assertTrue(e.getMessage().contains("'tags'") && e.getMessage().contains("List"), e.getMessage());
    }
    assertEquals(allocationsBefore, gpu.pool().stats().allocationCount());
  }

  @Test
  void toHostGivesTheCpuBackendTheSameTable() {
    try (VectorSchemaRoot source = allTypes(pageable, 333, Nulls.every(4), 8);
        DeviceTable table = DeviceTable.fromArrow(gpu, source, stream);
        HostTable host = table.toHost(pageable);
        VectorSchemaRoot back = host.toArrow(pageable)) {
      assertEquals(table.names(), host.names());
      assertEquals(table.types(), host.types());
      assertSameData(source, back);
    }
  }
}
