package dev.gpudf.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The interpreter kernel and the Java side must number opcodes, load kinds and stores alike. */
class OpcodeTest {
  private static final String SOURCE = "src/main/cuda/expr.cu";

  private static void assertNumbered(String cuda, Enum<?>[] values, String prefix) {
    for (Enum<?> v : values) {
      Matcher m = Pattern.compile("\\b" + prefix + v.name() + " = (\\d+)").matcher(cuda);
      assertEquals(true, m.find(), v.name() + " is not in " + SOURCE);
      assertEquals(v.ordinal(), Integer.parseInt(m.group(1)), v.name());
    }
  }

  @Test
  void kernelAndCompilerAgree() throws Exception {
    String cuda = Files.readString(Path.of(SOURCE));
    assertNumbered(cuda, Opcode.values(), "");
    assertNumbered(cuda, Opcode.LoadKind.values(), "K_");
    assertNumbered(cuda, Opcode.Cmp.values(), "C_");
    assertNumbered(cuda, Evaluate.StoreKind.values(), "S_");
    assertNumbered(cuda, Opcode.MathFn.values(), "M_");
    assertEquals(true, cuda.contains("kErrOverflow = " + Opcode.ERR_OVERFLOW));
    assertEquals(true, cuda.contains("kErrDivZero = " + Opcode.ERR_DIV_ZERO));
    assertEquals(true, cuda.contains("kErrDomain = " + Opcode.ERR_DOMAIN));
    assertEquals(true, cuda.contains("kErrNegativeLength = " + Opcode.ERR_NEGATIVE_LENGTH));
    assertEquals(true, cuda.contains("kErrWide = " + Opcode.ERR_WIDE));
    assertEquals(true, cuda.contains("expr_eval_r" + Program.MAX_REGISTERS + "_k1_kernel"), "no interpreter for the largest programs");
    assertEquals(true, cuda.contains("kWidth = " + Program.WIDTH));
    String arithmetic = cuda.substring(cuda.indexOf("// arithmetic opcodes"), cuda.indexOf("// end of the arithmetic opcodes"));
    java.util.Set<String> steps = new java.util.TreeSet<>();
    Matcher m = Pattern.compile("GPUDF_STEP\\((\\w+)\\)").matcher(arithmetic);
    while (m.find()) {
      steps.add(m.group(1));
    }
    assertEquals(new java.util.TreeSet<>(Program.ARITHMETIC.stream().map(Enum::name).toList()), steps);
  }
}
