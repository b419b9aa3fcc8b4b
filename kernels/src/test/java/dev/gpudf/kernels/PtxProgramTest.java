package dev.gpudf.kernels;

import static dev.gpudf.kernels.Expr.call;
import static dev.gpudf.kernels.Expr.col;
import static dev.gpudf.kernels.Expr.lit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.testing.TestTables;
import dev.gpudf.columnar.testing.TestTables.Nulls;
import dev.gpudf.kernels.Evaluate.StoreKind;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Generated kernels without a GPU: every arithmetic-only program of the expression suites, which
 * together use every translated opcode, load kind and store, must assemble with {@code ptxas}
 * (the GPU run of EvaluateTest checks what they compute). Skipped, with the reason, where the
 * CUDA toolkit is absent.
 */
class PtxProgramTest {
  /** The programs of EvaluateTest's suites and of TPC-H's charge that have a generated form. */
  private static List<Program> programs() {
    List<Program> out = new ArrayList<>();
    try (RootAllocator a = new RootAllocator(); VectorSchemaRoot r = TestTables.allTypes(a, 0, Nulls.NONE, 0);
        HostTable h = HostTable.fromArrow(r)) {
      List<DataType> types = h.types();
      List<Expr> all = new ArrayList<>(EvaluateTest.randomSuite(h.names()));
      all.addAll(EvaluateTest.failingSuite(h.names()));
      int f64 = h.names().indexOf("f64");
      all.add(call(Op.SUB, call(Op.MUL, col(f64), col(f64)), call(Op.NEG, col(f64))));
      all.add(call(Op.NOT, call(Op.IS_NOT_NULL, col(f64))));
      all.add(call(Op.ADD_MILLIS, col(h.names().indexOf("ts_utc")), lit(1L)));
      for (Expr e : all) {
        if (!StringBuild.anywhere(e, types)) {
          Program p = ExprCompiler.compile(e, types);
          if (PtxProgram.supports(p, Evaluate.storeKind(p.result()))) {
            out.add(p);
          }
        }
      }
    }
    DataType money = DataType.decimal(15, 2);
    out.add(ExprCompiler.compile(call(Op.MUL, call(Op.MUL, col(0), call(Op.SUB, lit(1), col(1))),
        call(Op.ADD, lit(1), col(2))), List.of(money, money, money)));
    return out;
  }

  @Test
  void theSuitesCoverEveryTranslatedOpcodeLoadAndStore() {
    Set<Opcode> ops = EnumSet.noneOf(Opcode.class);
    Set<Opcode.LoadKind> loads = EnumSet.noneOf(Opcode.LoadKind.class);
    Set<StoreKind> stores = EnumSet.noneOf(StoreKind.class);
    for (Program p : programs()) {
      for (int i = 0; i < p.code().length; i += Program.WIDTH) {
        Opcode op = Opcode.values()[p.code()[i]];
        ops.add(op);
        if (op == Opcode.LOAD_COL) {
          loads.add(Opcode.LoadKind.values()[p.code()[i + 4]]);
        }
      }
      stores.add(Evaluate.storeKind(p.result()));
    }
    assertEquals(Program.ARITHMETIC, ops);
    assertEquals(EnumSet.allOf(Opcode.LoadKind.class), loads);
    assertEquals(EnumSet.complementOf(EnumSet.of(StoreKind.STRLEN, StoreKind.STRCOPY)), stores);
  }

  @Test
  void programsOutsideTheArithmeticSetStayWithTheInterpreter() {
    Program like = ExprCompiler.compile(call(Op.LIKE, col(0), new Expr.Lit(DataType.STRING, "%a%")), List.of(DataType.STRING));
    assertFalse(PtxProgram.supports(like, StoreKind.BITS));
    assertThrows(IllegalArgumentException.class, () -> PtxProgram.generate(like, StoreKind.BITS));
    Program upper = ExprCompiler.compile(col(0), List.of(DataType.STRING));
    assertFalse(PtxProgram.supports(upper, StoreKind.STRLEN));
  }

  @Test
  void literalsAreReadAtRunTimeWhileScalesAreWrittenIn() {
    DataType money = DataType.decimal(15, 2);
    List<DataType> types = List.of(money, DataType.INT64);
    // a query's literals (a date, a dictionary code) differ between runs and data: one text
    String a = PtxProgram.generate(ExprCompiler.compile(call(Op.LE, col(1), lit(10_000L)), types), StoreKind.BITS);
    String b = PtxProgram.generate(ExprCompiler.compile(call(Op.LE, col(1), lit(-7L)), types), StoreKind.BITS);
    assertEquals(a, b);
    assertFalse(a.contains(String.format("0x%016X", 10_000L)), a);
    // a rescale's factor shapes the arithmetic: the kernels differ
    String scale2 = PtxProgram.generate(ExprCompiler.compile(Expr.cast(col(0), DataType.decimal(17, 4)), types),
        StoreKind.I64);
    String scale4 = PtxProgram.generate(ExprCompiler.compile(Expr.cast(col(0), DataType.decimal(18, 6)), types),
        StoreKind.I64);
    assertFalse(scale2.equals(scale4));
    assertTrue(scale2.contains(String.format("0x%016X", 100L)), scale2);
  }

  @Test
  void everyGeneratedKernelAssembles(@TempDir Path dir) throws Exception {
    File ptxas = onPath("ptxas");
    Assumptions.assumeTrue(ptxas != null, "ptxas is not on PATH (no CUDA toolkit): generated PTX not assembled");
    List<Program> programs = programs();
    assertTrue(programs.size() >= 30, programs.size() + " programs");
    for (int i = 0; i < programs.size(); i++) {
      Program p = programs.get(i);
      Path ptx = dir.resolve("p" + i + ".ptx");
      Files.writeString(ptx, PtxProgram.generate(p, Evaluate.storeKind(p.result())));
      Process run = new ProcessBuilder(ptxas.getPath(), "-arch=sm_90", ptx.toString(), "-o", dir.resolve("p" + i + ".cubin").toString())
          .redirectErrorStream(true).start();
      String log = new String(run.getInputStream().readAllBytes());
      assertTrue(run.waitFor(60, TimeUnit.SECONDS), "ptxas timed out");
      assertEquals(0, run.exitValue(), "program " + i + " did not assemble:\n" + log + "\n" + Files.readString(ptx));
    }
  }

  private static File onPath(String tool) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File f = new File(d, tool);
      if (f.canExecute()) {
        return f;
      }
    }
    return null;
  }
}
