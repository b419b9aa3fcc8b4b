package dev.gpudf.kernels;

import static dev.gpudf.kernels.Expr.call;
import static dev.gpudf.kernels.Expr.col;
import static dev.gpudf.kernels.Expr.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.gpudf.columnar.DataType;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the compiler emits for the programs whose shape picks an interpreter build or saves instructions. */
class ProgramTest {
  private static final DataType PRICE = DataType.decimal(15, 2);

  private static List<Opcode> opcodes(Program p) {
    List<Opcode> out = new ArrayList<>();
    for (int i = 0; i < p.instructions(); i++) {
      out.add(Opcode.values()[p.code()[i * Program.WIDTH]]);
    }
    return out;
  }

  @Test
  void literalsBesideWiderScaledDecimalsAreScaledOnceNotPerRow() {
    Expr charge = call(Op.MUL, call(Op.MUL, col(0), call(Op.SUB, lit(1), col(1))), call(Op.ADD, lit(1), col(2)));
    Program p = ExprCompiler.compile(charge, List.of(PRICE, PRICE, PRICE));
    // the literal is emitted after its decimal operand, whose type sets its scale
    assertEquals(List.of(Opcode.LOAD_COL, Opcode.LOAD_COL, Opcode.LOAD_CONST, Opcode.I_SUB, Opcode.I_MUL,
        Opcode.LOAD_COL, Opcode.LOAD_CONST, Opcode.I_ADD, Opcode.I_MUL), opcodes(p));
    assertEquals(DataType.decimal(38, 6), p.result());
    // as without the folding: INT is DECIMAL(10, 0), and 1 - DECIMAL(15, 2) has max(10, 13) + 2 + 1 digits
    assertEquals(DataType.decimal(16, 2), Evaluate.typeOf(call(Op.SUB, lit(1), col(0)), List.of(PRICE)));
    assertEquals(List.of(100L, 100L), java.util.Arrays.stream(p.constants()).boxed().toList());
  }

  @Test
  void aLongChainOfLiteralAdditionsCompilesInLinearTime() {
    // typing each literal's partner by compiling it again took time exponential in the depth
    Expr chain = col(0);
    for (int i = 0; i < 200; i++) {
      chain = call(Op.ADD, chain, lit(1));
    }
    Expr deep = chain;
    Program p = assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
        () -> ExprCompiler.compile(deep, List.of(PRICE)));
    assertEquals(false, opcodes(p).contains(Opcode.SCALE_UP));
  }

  @Test
  void aLiteralTooWideToScaleIsScaledPerRow() {
    Program p = ExprCompiler.compile(call(Op.ADD, lit(Long.MAX_VALUE / 10), col(0)), List.of(PRICE));
    assertEquals(true, opcodes(p).contains(Opcode.SCALE_UP));
  }

  @Test
  void theProgramsShapeNamesItsInterpreterBuild() {
    Program arithmetic = ExprCompiler.compile(call(Op.GT, call(Op.MUL, col(0), col(1)), lit(10)),
        List.of(DataType.INT64, DataType.INT64));
    assertEquals(true, arithmetic.arithmeticOnly());
    assertEquals(false, arithmetic.scansStrings());
    Program like = ExprCompiler.compile(call(Op.LIKE, col(0), new Expr.Lit(DataType.STRING, "%x%")), List.of(DataType.STRING));
    assertEquals(false, like.arithmeticOnly());
    assertEquals(true, like.scansStrings());
    Program division = ExprCompiler.compile(call(Op.DIV, col(0), col(1)), List.of(DataType.INT64, DataType.INT64));
    assertEquals(false, division.arithmeticOnly());
    assertEquals(false, division.scansStrings());
  }
}
