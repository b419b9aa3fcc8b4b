package dev.gpudf.kernels;

import dev.gpudf.columnar.DataType;
import java.util.List;

/**
 * A compiled expression: register-machine instructions of {@value #WIDTH} ints each (opcode,
 * destination, three operands), 64-bit constants, the input columns it reads (in slot order) and
 * the result type. The GPU kernel ({@code expr.cu}) and the CPU twin ({@link CpuEval}) run the
 * same program, one row at a time.
 *
 * @param code instructions
 * @param constants constant pool (integers, scaled decimals, double bits)
 * @param strings the bytes of the string constants, which instructions address by offset
 * @param columns input column index for each slot
 * @param registers registers used
 * @param result the result type
 * @param resultRegister the register holding the result
 */
public record Program(int[] code, long[] constants, byte[] strings, List<Integer> columns, int registers, DataType result,
    int resultRegister) {
  private static final java.util.Set<Opcode> STRING_SCANS = java.util.EnumSet.of(Opcode.CMP_S, Opcode.LIKE,
      Opcode.CHAR_LENGTH, Opcode.SUBSTRING, Opcode.TRIM, Opcode.POSITION, Opcode.PARSE);
  /** The opcodes of the arithmetic-only interpreter build (the first switch of {@code run} in {@code expr.cu}). */
  static final java.util.Set<Opcode> ARITHMETIC = java.util.EnumSet.of(Opcode.LOAD_COL, Opcode.LOAD_CONST, Opcode.I_ADD,
      Opcode.I_SUB, Opcode.I_MUL, Opcode.I_NEG, Opcode.F_ADD, Opcode.F_SUB, Opcode.F_MUL, Opcode.F_DIV, Opcode.F_NEG,
      Opcode.I2F, Opcode.SCALE_UP, Opcode.D2F, Opcode.CMP_I, Opcode.CMP_F, Opcode.AND, Opcode.OR, Opcode.NOT,
      Opcode.IS_NULL, Opcode.IS_NOT_NULL, Opcode.SELECT, Opcode.FLOOR_DIV, Opcode.CIVIL, Opcode.RANGE_CHECK,
      Opcode.PRECISION_CHECK, Opcode.SCALE_DOWN, Opcode.I_ABS, Opcode.TO_F32);
  /** Ints per instruction. */
  public static final int WIDTH = 5;
  /** Registers a program may use; the kernel keeps the next power of two (at least 4) per thread. */
  public static final int MAX_REGISTERS = 32;

  public int instructions() {
    return code.length / WIDTH;
  }

  /** Whether every instruction is one the arithmetic-only interpreter build runs. */
  public boolean arithmeticOnly() {
    return usesOnly(ARITHMETIC);
  }

  /** Whether an instruction walks a string's bytes (compare, LIKE, length, cut, search, parse). */
  public boolean scansStrings() {
    return !java.util.Collections.disjoint(opcodes(), STRING_SCANS);
  }

  /** Whether every instruction's opcode is in {@code ops}. */
  boolean usesOnly(java.util.Set<Opcode> ops) {
    return ops.containsAll(opcodes());
  }

  private java.util.Set<Opcode> opcodes() {
    java.util.Set<Opcode> used = java.util.EnumSet.noneOf(Opcode.class);
    Opcode[] all = Opcode.values();
    for (int i = 0; i < code.length; i += WIDTH) {
      used.add(all[code[i]]);
    }
    return used;
  }

  /**
   * The register file the kernels keep per row for this program: the next power of two, at
   * least 4, that holds its registers (register operands are masked with it).
   */
  int registerFile() {
    int r = 4;
    while (r < registers) {
      r <<= 1;
    }
    return r;
  }
}
