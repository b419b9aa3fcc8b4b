package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.CudaStream;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.columnar.testing.RequiresGpu;
import dev.gpudf.kernels.InputCheck.Kind;
import dev.gpudf.kernels.InputCheck.Problem;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The checks of columns from outside the process: the CPU twin against what each column was
 * built to break (and where), and on a GPU the kernels against the twin, over edge sizes, NULL
 * slots holding bad values (never reported), non-ASCII text and every kind of break.
 */
class InputCheckTest {
  private static final int[] SIZES = {1, 31, 32, 33, 1000, 70_001};

  /** A column built to hold one problem (or none) at a known place. */
  private record Case(String name, FieldVector vector, Problem expected) {}

  @Test
  void theCpuTwinFindsEachBreakAtItsPlace() {
    try (RootAllocator a = new RootAllocator()) {
      for (int rows : SIZES) {
        for (Case c : cases(a, rows)) {
          try (HostColumn column = new HostColumn(c.vector())) {
            assertEquals(c.expected(), InputCheck.find(Exec.onCpu(a), column), c.name() + ", " + rows + " rows");
          }
        }
      }
    }
  }

  @Test
  void aProblemIsAUserErrorNamingTheColumnAndRow() {
    try (RootAllocator a = new RootAllocator()) {
      List<Case> cases = cases(a, 40);
      try {
        Case utf8 = cases.stream().filter(c -> c.name().equals("bad UTF-8 after a bad NULL slot")).findFirst().orElseThrow();
        try (HostColumn column = new HostColumn(utf8.vector())) {
          UserException e = assertThrows(UserException.class, () -> InputCheck.check(Exec.onCpu(a), column, "column 's'"));
          assertEquals("column 's' row 39 is not UTF-8", e.getMessage());
        }
      } finally {
        cases.forEach(c -> c.vector().close());
      }
    }
  }

  @RequiresGpu
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 31, 32, 33, 1000, 70_001})
  void theKernelsFindWhatTheTwinFinds(int rows) {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        CudaStream stream = gpu.newStream(); Exec exec = Exec.onGpu(gpu, a)) {
      for (Case c : cases(a, rows)) {
        try (VectorSchemaRoot root = new VectorSchemaRoot(List.of(c.vector()));
            DeviceTable device = DeviceTable.fromArrow(gpu, root, stream)) {
          Problem cpu;
          try (HostTable host = HostTable.fromArrow(root)) {
            cpu = InputCheck.find(Exec.onCpu(a), host.column(0));
          }
          assertEquals(rows == 0 ? null : c.expected(), cpu, c.name() + ", " + rows + " rows (CPU twin)");
          assertEquals(cpu, InputCheck.find(exec, device.column(0)), c.name() + ", " + rows + " rows");
        }
      }
    }
  }

  /** Breaks only a device column can have: offsets past its data, a null count its bitmap does not have. */
  @RequiresGpu
  @Test
  void offsetsPastTheDataAndAWrongNullCountAreFoundOnTheDevice() {
    try (RootAllocator a = new RootAllocator(); Gpu gpu = Gpu.open(0, 1L << 30, 256L << 20);
        CudaStream stream = gpu.newStream(); Exec exec = Exec.onGpu(gpu, a)) {
      for (Case c : cases(a, 33)) {
        if (!c.name().equals("valid text") && !c.name().equals("valid DECIMAL(9, 2)")) {
          c.vector().close();
          continue;
        }
        try (VectorSchemaRoot root = new VectorSchemaRoot(List.of(c.vector()));
            DeviceTable t = DeviceTable.fromArrow(gpu, root, stream)) {
          DeviceColumn col = t.column(0);
          assertTrue(col.nullCount() > 0, c.name());
          retain(col);
          try (DeviceColumn wrong = new DeviceColumn(col.type(), col.rowCount(), col.nullCount() - 1, col.data(),
              col.offsets(), col.validity())) {
            assertEquals(new Problem(Kind.NULL_COUNT, col.nullCount()), InputCheck.find(exec, wrong), c.name());
          }
          if (col.offsets() != null) {
            // the same offsets over a data buffer one byte short: the last offset points past it
            DeviceBuffer shorter = exec.allocate(col.data().size() - 1);
            exec.copy(shorter, 0, col.data(), 0, shorter.size());
            col.offsets().retain();
            col.validity().retain();
            try (DeviceColumn cut = new DeviceColumn(col.type(), col.rowCount(), col.nullCount(), shorter, col.offsets(),
                col.validity())) {
              assertEquals(new Problem(Kind.OFFSETS, 33), InputCheck.find(exec, cut));
            }
          }
        }
      }
    }
  }

  private static void retain(DeviceColumn c) {
    c.data().retain();
    if (c.offsets() != null) {
      c.offsets().retain();
    }
    if (c.validity() != null) {
      c.validity().retain();
    }
  }

  /** Columns of {@code rows} rows (at least 1): valid ones, and one per kind of break, each with NULL slots holding bad values before it. */
  private static List<Case> cases(BufferAllocator a, int rows) {
    List<Case> out = new ArrayList<>();
    int last = rows - 1;
    int middle = rows / 2;
    byte[] cut = {'a', (byte) 0xc3};
    byte[] surrogate = {(byte) 0xed, (byte) 0xa0, (byte) 0x80};
    byte[] overlong = {(byte) 0xc0, (byte) 0xaf};
    byte[] tooHigh = {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80};
    out.add(new Case("valid text", strings(a, rows, (r, v) -> nonAscii(r)), null));
    out.add(new Case("bad UTF-8 after a bad NULL slot", strings(a, rows, (r, v) -> r == last ? cut : nonAscii(r)),
        new Problem(Kind.UTF8, last)));
    out.add(new Case("a surrogate", strings(a, rows, (r, v) -> r == middle ? surrogate : nonAscii(r)),
        new Problem(Kind.UTF8, middle)));
    out.add(new Case("an overlong form", strings(a, rows, (r, v) -> r == middle ? overlong : nonAscii(r)),
        new Problem(Kind.UTF8, middle)));
    out.add(new Case("past U+10FFFF", strings(a, rows, (r, v) -> r == last ? tooHigh : nonAscii(r)),
        new Problem(Kind.UTF8, last)));
    if (rows > 1) {
      // offset `at` one below the one before (negative when that is the first): first and last
      // offsets stay, as an upload needs them
      VarCharVector backwards = strings(a, rows, (r, v) -> nonAscii(r));
      int at = Math.max(1, middle);
      backwards.getOffsetBuffer().setInt(4L * at, backwards.getOffsetBuffer().getInt(4L * (at - 1)) - 1);
      out.add(new Case("offsets running backwards", backwards, new Problem(Kind.OFFSETS, at)));
    }
    BigInteger nine = BigInteger.TEN.pow(9);
    BigInteger big = BigInteger.TEN.pow(38);
    BigInteger min = BigInteger.ONE.shiftLeft(127).negate();
    out.add(new Case("valid DECIMAL(9, 2)", decimals(a, rows, 9, r -> nine.subtract(BigInteger.ONE).negate()), null));
    out.add(new Case("DECIMAL(9, 2) past 9 digits", decimals(a, rows, 9, r -> r == last ? nine : BigInteger.valueOf(r)),
        new Problem(Kind.DIGITS, last)));
    out.add(new Case("DECIMAL(9, 2) past 9 digits below zero", decimals(a, rows, 9, r -> r == middle ? nine.negate()
        : BigInteger.valueOf(-r)), new Problem(Kind.DIGITS, middle)));
    out.add(new Case("valid DECIMAL(38, 2)", decimals(a, rows, 38, r -> big.subtract(BigInteger.ONE)), null));
    out.add(new Case("DECIMAL(38, 2) at 10^38", decimals(a, rows, 38, r -> r == middle ? big.negate() : BigInteger.ONE),
        new Problem(Kind.DIGITS, middle)));
    out.add(new Case("DECIMAL(38, 2) at -2^127", decimals(a, rows, 38, r -> r == last ? min : BigInteger.ONE),
        new Problem(Kind.DIGITS, last)));
    out.add(new Case("DECIMAL(20, 2) past 20 digits", decimals(a, rows, 20, r -> r == last ? BigInteger.TEN.pow(20)
        : BigInteger.TEN.pow(19)), new Problem(Kind.DIGITS, last)));
    return out;
  }

  private static byte[] nonAscii(int r) {
    return (r % 3 == 0 ? "é" + r + "日本" : "x" + r).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A STRING column of {@code rows} rows, row r holding {@code value(r)}; every 7th row before the
   * last is NULL and holds bytes that are not UTF-8 (no check may look at them).
   */
  private static VarCharVector strings(BufferAllocator a, int rows, BiFunction<Integer, Void, byte[]> value) {
    VarCharVector v = new VarCharVector("s", a);
    v.allocateNew();
    for (int r = 0; r < rows; r++) {
      if (r % 7 == 3 && r < rows / 2) {
        v.setSafe(r, new byte[] {(byte) 0xff, (byte) 0xfe});
        v.setNull(r);
      } else {
        v.setSafe(r, value.apply(r, null));
      }
    }
    v.setValueCount(rows);
    // setNull keeps the slot's length: a NULL slot here holds its bad bytes
    return v;
  }

  /** A DECIMAL(p, 2) column whose row r holds the unscaled {@code value(r)}; every 7th row before the middle is NULL holding 10^p+5. */
  private static DecimalVector decimals(BufferAllocator a, int rows, int precision,
      java.util.function.IntFunction<BigInteger> value) {
    DecimalVector v = new DecimalVector("d", a, precision, 2);
    v.allocateNew(rows);
    for (int r = 0; r < rows; r++) {
      boolean nullSlot = r % 7 == 3 && r < rows / 2;
      BigInteger x = nullSlot ? BigInteger.TEN.pow(precision).add(BigInteger.valueOf(5)) : value.apply(r);
      v.setIndexDefined(r);
      // raw little-endian two's complement, past the vector's own precision checks
      v.getDataBuffer().setLong(16L * r, x.longValue());
      v.getDataBuffer().setLong(16L * r + 8, x.shiftRight(64).longValue());
      if (nullSlot) {
        v.setNull(r);
      }
    }
    v.setValueCount(rows);
    return v;
  }
}
