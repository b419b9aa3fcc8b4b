package dev.gpudf.bench;

import static dev.gpudf.kernels.Expr.call;
import static dev.gpudf.kernels.Expr.col;
import static dev.gpudf.kernels.Expr.lit;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.cuda.CudaEvent;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.kernels.Evaluate;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Op;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compare.TypeEqualsVisitor;
import org.apache.arrow.vector.compare.VectorEqualsVisitor;

/**
 * The expression figures of the expressions issue: {@code l_extendedprice * (1 - l_discount) *
 * (1 + l_tax)} on DECIMAL(15,2) columns (TPC-H lineitem shape), {@code p_name LIKE '%green%'}
 * over part-name-like strings and {@code o_comment NOT LIKE '%special%requests%'} over
 * comment-like strings, and that predicate again over a dictionary-encoded comment column (10,000
 * distinct comments) next to the same rows decoded; GPU (CUDA events around the call, median after a JIT warm-up) and the CPU twin (one run).
 * The decimal expression runs on the GPU twice, in the interpreter and as a generated kernel (with
 * the first call, which compiles it, timed apart), and both results are compared with the CPU twin's.
 * Lines starting {@code RESULT} as in {@link KernelBenchmark}.
 *
 * <p>{@code ExprBenchmark [lineitemRows] [partRows] [orderRows] [reps] [gpu]}; gpu = 0 runs the
 * CPU twin only (any host).
 */
public final class ExprBenchmark {
  /** Distinct comments in the dictionary-encoded comment column. */
  private static final int DICTIONARY_ENTRIES = 10_000;
  private static final String[] COLORS = {"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black",
    "blanched", "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral",
    "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick", "floral", "forest",
    "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki",
    "lace", "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium", "metallic",
    "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid", "pale", "papaya", "peach",
    "peru", "pink", "plum", "powder", "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy",
    "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato",
    "turquoise", "violet", "wheat", "white", "yellow"};
  private static final String[] WORDS = {"furiously", "special", "requests", "carefully", "final", "deposits",
    "pending", "accounts", "quickly", "ironic", "packages", "slyly", "regular", "theodolites", "bold", "blithely",
    "express", "instructions", "even", "foxes", "unusual", "pinto", "beans", "sleep", "wake", "above", "the"};

  public static void main(String[] args) {
    int lineitem = args.length > 0 ? Integer.parseInt(args[0]) : 60_000_000;
    int part = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
    int orders = args.length > 2 ? Integer.parseInt(args[2]) : 15_000_000;
    int reps = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    boolean gpuToo = args.length <= 4 || !args[4].equals("0");
    Expr charge = call(Op.MUL, call(Op.MUL, col(0), call(Op.SUB, lit(1), col(1))), call(Op.ADD, lit(1), col(2)));
    Expr green = call(Op.LIKE, col(0), new Expr.Lit(DataType.STRING, "%green%"));
    Expr special = call(Op.NOT, call(Op.LIKE, col(0), new Expr.Lit(DataType.STRING, "%special%requests%")));
    List<VectorSchemaRoot> gpuCharges = new ArrayList<>();
    try (BufferAllocator a = new RootAllocator();
        VectorSchemaRoot li = decimals(a, lineitem, 7);
        VectorSchemaRoot names = texts(a, "p_name", part, 5, COLORS, 11);
        VectorSchemaRoot comments = texts(a, "o_comment", orders, 9, WORDS, 13);
        VectorSchemaRoot dictionary = texts(a, "o_comment", DICTIONARY_ENTRIES, 9, WORDS, 17);
        VectorSchemaRoot codes = codes(a, orders, DICTIONARY_ENTRIES, 19);
        VectorSchemaRoot decoded = decode(a, dictionary, codes)) {
      System.out.printf("rows: lineitem %d, part %d, orders %d; reps %d%n", lineitem, part, orders, reps);
      if (gpuToo) {
        try (Gpu gpu = Gpu.open(0); Exec g = Exec.onGpu(gpu, a);
            DeviceTable dli = DeviceTable.fromArrow(gpu, li, g.stream());
            DeviceTable dnames = DeviceTable.fromArrow(gpu, names, g.stream());
            DeviceTable dcomments = DeviceTable.fromArrow(gpu, comments, g.stream())) {
          System.out.printf("device %s%n", gpu.device().name());
          int generatedFrom = Evaluate.setGeneratedMinRows(Integer.MAX_VALUE);
          gpuResult(gpu, g, "charge_decimal_interpreter", reps, () -> Evaluate.evaluate(g, dli, charge));
          gpuCharges.add(download(gpu, g, a, Evaluate.evaluate(g, dli, charge)));
          Evaluate.setGeneratedMinRows(generatedFrom);
          long t0 = System.nanoTime();
          Evaluate.evaluate(g, dli, charge).close();
          g.stream().synchronize();
          System.out.printf("first generated call (the driver compiles the kernel): %.1f ms%n", (System.nanoTime() - t0) / 1e6);
          gpuResult(gpu, g, "charge_decimal", reps, () -> Evaluate.evaluate(g, dli, charge));
          gpuCharges.add(download(gpu, g, a, Evaluate.evaluate(g, dli, charge)));
          gpuResult(gpu, g, "like_green", reps, () -> Evaluate.evaluate(g, dnames, green));
          gpuResult(gpu, g, "not_like_special_requests", reps, () -> Evaluate.evaluate(g, dcomments, special));
          try (DeviceTable dcodes = DeviceTable.fromArrow(gpu, codes, g.stream());
              DeviceTable ddict = DeviceTable.fromArrow(gpu, dictionary, g.stream());
              DeviceTable ddecoded = DeviceTable.fromArrow(gpu, decoded, g.stream())) {
            gpuResult(gpu, g, "dict_not_like_special_requests", reps,
                () -> Evaluate.evaluate(g, dcodes, Map.of(0, ddict.column(0)), special));
            gpuResult(gpu, g, "decoded_not_like_special_requests", reps, () -> Evaluate.evaluate(g, ddecoded, special));
          }
        }
      }
      try (Exec cpu = Exec.onCpu(a); HostTable hli = HostTable.fromArrow(li); HostTable hnames = HostTable.fromArrow(names);
          HostTable hcomments = HostTable.fromArrow(comments)) {
        cpuResult("cpu_charge_decimal", () -> Evaluate.evaluate(cpu, hli, charge));
        try (HostColumn want = Evaluate.evaluate(cpu, hli, charge)) {
          String[] ways = {"interpreter", "generated"};
          for (int i = 0; i < gpuCharges.size(); i++) {
            FieldVector got = gpuCharges.get(i).getVector(0);
            // the columns' names differ ("x" and the CPU's); the type, validity and values must not
            boolean same = VectorEqualsVisitor.vectorEquals(want.vector(), got, (l, r) -> new TypeEqualsVisitor(r, false, false).equals(l));
            System.out.printf("CHECK charge_decimal %s == cpu twin: %s%s%n", ways[i], same, same ? "" : firstDifference(want.vector(), got));
          }
        }
        cpuResult("cpu_like_green", () -> Evaluate.evaluate(cpu, hnames, green));
        cpuResult("cpu_not_like_special_requests", () -> Evaluate.evaluate(cpu, hcomments, special));
        try (HostTable hcodes = HostTable.fromArrow(codes); HostTable hdict = HostTable.fromArrow(dictionary);
            HostTable hdecoded = HostTable.fromArrow(decoded)) {
          cpuResult("cpu_dict_not_like_special_requests", () -> Evaluate.evaluate(cpu, hcodes, Map.of(0, hdict.column(0)), special));
          cpuResult("cpu_decoded_not_like_special_requests", () -> Evaluate.evaluate(cpu, hdecoded, special));
        }
      } finally {
        gpuCharges.forEach(VectorSchemaRoot::close);
      }
    }
  }

  private interface Op1 {
    Column run();
  }

  private static void gpuResult(Gpu gpu, Exec g, String name, int reps, Op1 op) {
    try (CudaEvent start = new CudaEvent(gpu.device(), true); CudaEvent end = new CudaEvent(gpu.device(), true)) {
      JitWarmUp.run(g.stream(), () -> op.run().close());
      double[] ms = new double[reps];
      long nulls = 0;
      for (int r = 0; r < reps; r++) {
        start.record(g.stream());
        try (Column c = op.run()) {
          end.record(g.stream());
          end.synchronize();
          nulls = c.nullCount();
        }
        ms[r] = end.elapsedMillisSince(start);
      }
      Arrays.sort(ms);
      System.out.printf("RESULT %s %.3f ms (median of %d; %d null results)%n", name, ms[reps / 2], reps, nulls);
    }
  }

  private static String firstDifference(FieldVector want, FieldVector got) {
    if (want.getValueCount() != got.getValueCount() || !want.getField().getType().equals(got.getField().getType())) {
      return " (" + want.getField() + " x" + want.getValueCount() + " against " + got.getField() + " x" + got.getValueCount() + ")";
    }
    for (int i = 0; i < want.getValueCount(); i++) {
      if (!java.util.Objects.equals(want.getObject(i), got.getObject(i))) {
        return " (row " + i + ": " + want.getObject(i) + " against " + got.getObject(i) + ")";
      }
    }
    return " (values agree; validity buffers differ)";
  }

  /** {@code c} copied to the host (and closed); the caller closes the root. */
  private static VectorSchemaRoot download(Gpu gpu, Exec g, BufferAllocator a, DeviceColumn c) {
    try (DeviceTable one = new DeviceTable(gpu, List.of("x"), List.of(c), c.rowCount())) {
      return one.toArrow(a, g.stream());
    }
  }

  private static void cpuResult(String name, Op1 op) {
    long t0 = System.nanoTime();
    try (Column c = op.run()) {
      System.out.printf("RESULT %s %.3f ms (one run, %d cores, %d rows)%n", name, (System.nanoTime() - t0) / 1e6,
          Runtime.getRuntime().availableProcessors(), c.rowCount());
    }
  }

  /** l_extendedprice, l_discount, l_tax as DECIMAL(15,2) with TPC-H's value ranges. */
  private static VectorSchemaRoot decimals(BufferAllocator a, int rows, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    DecimalVector price = new DecimalVector("l_extendedprice", a, 15, 2);
    DecimalVector disc = new DecimalVector("l_discount", a, 15, 2);
    DecimalVector tax = new DecimalVector("l_tax", a, 15, 2);
    for (DecimalVector v : List.of(price, disc, tax)) {
      v.allocateNew(rows);
      v.getValidityBuffer().setOne(0L, (rows + 7L) / 8);
    }
    long p = price.getDataBuffer().memoryAddress();
    long d = disc.getDataBuffer().memoryAddress();
    long t = tax.getDataBuffer().memoryAddress();
    for (long i = 0; i < rows; i++) {
      MemoryUtil.putLong(p + 16 * i, r.nextLong(90_000L, 10_495_000L));  // 900.00 .. 104950.00
      MemoryUtil.putLong(p + 16 * i + 8, 0L);
      MemoryUtil.putLong(d + 16 * i, r.nextLong(0, 11));                 // 0.00 .. 0.10
      MemoryUtil.putLong(d + 16 * i + 8, 0L);
      MemoryUtil.putLong(t + 16 * i, r.nextLong(0, 9));                  // 0.00 .. 0.08
      MemoryUtil.putLong(t + 16 * i + 8, 0L);
    }
    for (DecimalVector v : List.of(price, disc, tax)) {
      v.setValueCount(rows);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(price, disc, tax));
    root.setRowCount(rows);
    return root;
  }

  /** Random INT32 codes into a dictionary of {@code entries}. */
  private static VectorSchemaRoot codes(BufferAllocator a, int rows, int entries, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    IntVector v = new IntVector("o_comment", a);
    v.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      v.set(i, r.nextInt(entries));
    }
    v.setValueCount(rows);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v));
    root.setRowCount(rows);
    return root;
  }

  /** The strings {@code codes} stand for. */
  private static VectorSchemaRoot decode(BufferAllocator a, VectorSchemaRoot dictionary, VectorSchemaRoot codes) {
    VarCharVector words = (VarCharVector) dictionary.getVector(0);
    IntVector c = (IntVector) codes.getVector(0);
    int rows = codes.getRowCount();
    VarCharVector v = new VarCharVector("o_comment", a);
    v.allocateNew(64L * rows, rows);
    for (int i = 0; i < rows; i++) {
      v.setSafe(i, words.get(c.get(i)));
    }
    v.setValueCount(rows);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v));
    root.setRowCount(rows);
    return root;
  }

  /** Strings of {@code words} words drawn from {@code vocabulary}, space separated. */
  private static VectorSchemaRoot texts(BufferAllocator a, String name, int rows, int words, String[] vocabulary, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    VarCharVector v = new VarCharVector(name, a);
    v.allocateNew(12L * words * rows, rows);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      b.setLength(0);
      for (int w = 0; w < words; w++) {
        if (w > 0) {
          b.append(' ');
        }
        b.append(vocabulary[r.nextInt(vocabulary.length)]);
      }
      v.setSafe(i, b.toString().getBytes(StandardCharsets.UTF_8));
    }
    v.setValueCount(rows);
    VectorSchemaRoot root = new VectorSchemaRoot(List.<FieldVector>of(v));
    root.setRowCount(rows);
    return root;
  }
}
