package dev.gpudf.kernels;

import dev.gpudf.columnar.Column;
import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.DeviceColumn;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.columnar.TypeId;
import dev.gpudf.columnar.cuda.CudaDevice;
import dev.gpudf.columnar.cuda.DeviceBuffer;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.UserException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Evaluates an {@link Expr} over every row of a table into a new column: compiled once
 * ({@link ExprCompiler}), then run on the GPU by one interpreter kernel ({@code expr.cu}) or, for
 * large inputs and arithmetic-only programs, by a kernel generated for the program ({@link
 * PtxProgram}), or on the CPU by their twin ({@link CpuEval}). A row that overflows or divides by zero fails the whole call
 * with a {@link UserException} naming the first such row, unless the failing part was not needed
 * (a CASE branch not taken, the other side of a decided AND or OR).
 */
public final class Evaluate {
  /** Rows per parallel task when the CPU twin writes its result; a multiple of 64. */
  private static final int STORE_CHUNK = 1 << 16;
  /** The default of {@link #setGeneratedMinRows}. */
  public static final int DEFAULT_GENERATED_MIN_ROWS = 1 << 20;
  private static volatile int generatedMinRows = Integer.getInteger("gpudf.expr.generatedMinRows", DEFAULT_GENERATED_MIN_ROWS);

  private Evaluate() {}

  /**
   * How the result register is written out; matches {@code Store} in {@code expr.cu}. Strings
   * take two launches: STRLEN writes each row's byte length, STRCOPY its bytes at the scanned
   * offsets.
   */
  enum StoreKind { I8, I16, I32, I64, F32, F64, BITS, D128, STRLEN, STRCOPY }

  /**
   * Sets the rows from which an arithmetic-only program runs on the GPU as a kernel generated for
   * it ({@link PtxProgram}) instead of in the interpreter, for every later call in this process;
   * returns the previous setting. Compiling a kernel takes milliseconds, once per program and
   * device, which only large inputs repay. {@code -Dgpudf.expr.generatedMinRows} sets it at start
   * ({@value #DEFAULT_GENERATED_MIN_ROWS} by default); benchmarks and tests change it to run a
   * program both ways ({@link Integer#MAX_VALUE}: never generate).
   */
  public static int setGeneratedMinRows(int rows) {
    int before = generatedMinRows;
    generatedMinRows = rows;
    return before;
  }

  /**
   * Kernels generated for programs on one device so far, and the time the driver took to compile
   * and load their PTX, which includes waiting: a load waits behind device work under way (40-90
   * ms of TPC-H SF10's cold runs from Parquet, where the reads' decoding was queued).
   */
  public record GeneratedKernelStats(int kernels, long compileNanos) {}

  /** The kernels generated on {@code device} so far ({@link GeneratedKernelStats}). */
  public static GeneratedKernelStats generatedKernels(CudaDevice device) {
    return GeneratedKernels.on(device).stats();
  }

  /** On the GPU; the caller owns the result. */
  public static DeviceColumn evaluate(Exec exec, DeviceTable table, Expr e) {
    return (DeviceColumn) evaluate(exec, EvalInput.of(table), e);
  }

  /** On the CPU; the caller owns the result. */
  public static HostColumn evaluate(Exec exec, HostTable table, Expr e) {
    return (HostColumn) evaluate(exec, EvalInput.of(table), e);
  }

  /**
   * On the GPU, over a table whose columns named in {@code dictionaries} are dictionary-encoded:
   * the table holds their INT32 codes (a null code is a null row; a code outside the dictionary is
   * a {@link UserException}) and the map their dictionaries. A part of {@code e} that reads one
   * encoded column and nothing else is evaluated once per dictionary entry and looked up by code
   * ({@link DictionaryEval}). The caller owns the result; the inputs are borrowed.
   */
  public static DeviceColumn evaluate(Exec exec, DeviceTable table, Map<Integer, DeviceColumn> dictionaries, Expr e) {
    return (DeviceColumn) DictionaryEval.evaluate(exec, EvalInput.of(table), dictionaries, e);
  }

  /** The CPU twin of {@link #evaluate(Exec, DeviceTable, Map, Expr)}; the caller owns the result. */
  public static HostColumn evaluate(Exec exec, HostTable table, Map<Integer, HostColumn> dictionaries, Expr e) {
    return (HostColumn) DictionaryEval.evaluate(exec, EvalInput.of(table), dictionaries, e);
  }

  /**
   * Device work queued on a BOOL result between its evaluation's launches and their one wait,
   * which reads back a long that work leaves, so that a filter counts its rows with no wait of its
   * own ({@link Filter#select(Exec, DeviceTable, Expr)}).
   */
  interface Then {
    /**
     * Queues work over the result's {@code rows} bits ({@code data}, and {@code validity}: both
     * borrowed, valid until the wait) that leaves a long at byte {@code at} of {@code results}.
     */
    void queue(DeviceBuffer data, DeviceBuffer validity, int rows, DeviceBuffer results, long at);

    /** The long the queued work left, read in the evaluation's wait. */
    void read(long value);
  }

  /**
   * {@link #evaluate(Exec, DeviceTable, Expr)} with {@code then} queued before its wait where
   * the expression runs as one program with a BOOL result; where it does not (the whole condition
   * one string match, a DECIMAL computed on the host), {@code then} is never called. The caller
   * owns the result.
   */
  static DeviceColumn evaluate(Exec exec, DeviceTable table, Expr e, Then then) {
    return (DeviceColumn) evaluate(exec, EvalInput.of(table), e, then);
  }

  /**
   * On the input's backend; the caller owns the result. Parts that build strings are computed
   * first, as columns of their own ({@link StringBuild}); so are, on the GPU from the rows where
   * generated kernels start ({@link #setGeneratedMinRows}), string columns compared with constants
   * ({@link StringMatch}).
   */
  static Column evaluate(Exec exec, EvalInput in, Expr e) {
    return evaluate(exec, in, e, null);
  }

  private static Column evaluate(Exec exec, EvalInput in, Expr e, Then then) {
    if (StringBuild.anywhere(e, in.types())) {
      if (StringBuild.builds(e, in.types())) {
        return StringBuild.build(exec, in, e);
      }
      List<Column> made = new ArrayList<>();
      try {
        Expr rest = StringBuild.materialize(exec, in, e, made);
        return evaluate(exec, in.plus(made), rest, then);
      } finally {
        made.forEach(Column::close);
      }
    }
    if (in.onDevice() && in.rows() >= generatedMinRows && StringMatch.anywhere(e, in.types())) {
      List<Column> made = new ArrayList<>();
      try {
        Expr rest = StringMatch.materialize(exec, in, e, made);
        if (rest instanceof Expr.Col col && col.index() == in.width() && made.size() == 1) {
          // the whole expression was one match: its column is the result
          return made.remove(0);
        }
        return gpu(exec, in.plus(made), rest, then);
      } finally {
        made.forEach(Column::close);
      }
    }
    return in.onDevice() ? gpu(exec, in, e, then) : cpu(exec, in, e);
  }

  private static int align8(int bytes) {
    return (bytes + 7) & ~7;
  }

  /** An interpreter build of {@code expr.cu}: its entry point and the rows each thread takes per pass. */
  private record Interpreter(String kernel, int rowsPerThread) {
    /**
     * The build for the fewest registers (a power of two, at least 4) that hold {@code p}'s: four
     * rows a thread for programs of up to 8 registers that do not scan strings (the
     * arithmetic-only build when {@link Program#arithmeticOnly}), one row a thread otherwise.
     */
    static Interpreter of(Program p) {
      int r = p.registerFile();
      if (r <= 8 && !p.scansStrings()) {
        return new Interpreter((p.arithmeticOnly() ? "expr_arith_r" : "expr_eval_r") + r + "_k4_kernel", 4);
      }
      return new Interpreter("expr_eval_r" + r + "_k1_kernel", 1);
    }
  }

  private static DeviceColumn gpu(Exec exec, EvalInput in, Expr e, Then then) {
    Program p = ExprCompiler.compile(e, in.types());
    int n = in.rows();
    StoreKind store = storeKind(p.result());
    Then after = store == StoreKind.BITS ? then : null;
    long words = (n + 31L) / 32;
    long[] columns = new long[3 * p.columns().size()];
    for (int s = 0; s < p.columns().size(); s++) {
      DeviceColumn c = (DeviceColumn) in.columns().get(p.columns().get(s));
      columns[3 * s] = c.data().address();
      columns[3 * s + 1] = c.validity() == null ? 0 : c.validity().address();
      columns[3 * s + 2] = c.offsets() == null ? 0 : c.offsets().address();
    }
    List<DeviceBuffer> owned = new ArrayList<>(2);
    // the program's four arrays and its two result slots go up in one copy: each copy is a driver
    // call of its own, and short queries evaluate many expressions
    ByteBuffer packed = ByteBuffer.allocate(align8(4 * p.code().length) + 8 * p.constants().length
        + align8(p.strings().length) + 8 * columns.length + 24).order(ByteOrder.LITTLE_ENDIAN);
    int codeAt = 0;
    packed.asIntBuffer().put(p.code());
    int constsAt = align8(4 * p.code().length);
    packed.position(constsAt);
    packed.asLongBuffer().put(p.constants());
    int poolAt = constsAt + 8 * p.constants().length;
    packed.position(poolAt);
    packed.put(p.strings());
    int colsAt = poolAt + align8(p.strings().length);
    packed.position(colsAt);
    packed.asLongBuffer().put(columns);
    // the first failing row (-1: none), the result's valid rows, and what `after` leaves: read
    // back in one wait
    int resultsAt = colsAt + 8 * columns.length;
    packed.putLong(resultsAt, -1L);
    try (DeviceBuffer program = exec.upload(packed.array())) {
      long base = program.address();
      Object[] args = {base + codeAt, p.instructions(), base + constsAt, base + poolAt, base + colsAt};
      long error = base + resultsAt;
      long bytes = switch (store) {
        case BITS -> 4 * words;
        case D128 -> 16L * n;
        case STRLEN -> 8L * (n + 1);
        default -> (long) n * p.result().byteWidth();
      };
      DeviceBuffer out = exec.allocate(bytes);
      owned.add(out);
      DeviceBuffer validity = exec.allocate(4 * words);
      owned.add(validity);
      GeneratedKernels.Kernel generated = n >= generatedMinRows && PtxProgram.supports(p, store)
          ? GeneratedKernels.on(exec.stream().device()).kernel(p, store) : null;
      // strings are never generated: the STRCOPY launch below always has the interpreter
      String kernel = null;
      int grid = 0;
      if (generated != null) {
        KernelLaunch.launch(generated, KernelLaunch.residentGridFor(exec.stream().device(), generated.residentBlocks(), n),
            exec.stream(), args[0], args[1], args[2], args[3], args[4], (long) n, p.resultRegister(), store.ordinal(),
            out, validity, error, null, null);
      } else {
        Interpreter interpreter = Interpreter.of(p);
        kernel = interpreter.kernel();
        grid = KernelLaunch.residentGridFor(exec.stream().device(), kernel,
            ((long) n + interpreter.rowsPerThread() - 1) / interpreter.rowsPerThread());
        if (n > 0) {
          KernelLaunch.launch(kernel, grid, exec.stream(), args[0], args[1], args[2], args[3], args[4], (long) n,
              p.resultRegister(), store.ordinal(), out, validity, error, null, null);
        }
      }
      // the validity is final after the first launch (a STRCOPY pass writes the same bits again)
      Bitmaps.addSetCount(validity, null, n, error + 8, exec.stream());
      if (after != null) {
        after.queue(out, validity, n, program, resultsAt + 16);
      }
      long[] results = exec.readLongs(program, resultsAt, after == null ? 2 : 3);
      if (results[0] != -1L && (results[0] & 0xFF) == Opcode.ERR_WIDE) {
        // a DECIMAL value outgrew the device's 64-bit registers: the host computes it in 128
        owned.forEach(DeviceBuffer::close);
        return onHost(exec, in, e, p);
      }
      if (results[0] != -1L) {
        throw rowError(exec, in, e, results[0]);
      }
      DeviceBuffer offsets = null;
      if (store == StoreKind.STRLEN) {
        // lengths -> offsets, then the same program again copies each row's bytes into place
        long total = DeviceScan.scan(exec, PhysicalType.I64, out, null, n, out, false, true);
        if (total > Integer.MAX_VALUE) {
          throw new UserException("the expression's strings hold " + total + " bytes, more than a column's 2 GiB limit");
        }
        offsets = exec.allocate(4L * (n + 1));
        owned.add(offsets);
        KernelLaunch.launch("narrow_offsets_kernel", KernelLaunch.gridFor(exec.stream().device(), n + 1L), exec.stream(),
            out, n + 1L, offsets);
        owned.remove(out);
        out.close();
        out = exec.allocate(total);
        owned.add(out);
        if (n > 0) {
          KernelLaunch.launch(kernel, grid, exec.stream(), args[0], args[1], args[2], args[3], args[4], (long) n,
              p.resultRegister(), StoreKind.STRCOPY.ordinal(), null, validity, error, offsets, out);
        }
      }
      if (after != null) {
        after.read(results[2]);
      }
      int nulls = n - (int) results[1];
      if (nulls == 0) {
        owned.remove(validity);
        validity.close();
        validity = null;
      }
      return new DeviceColumn(p.result(), n, nulls, out, offsets, validity);
    } catch (RuntimeException ex) {
      for (DeviceBuffer b : owned) {
        try {
          b.close();
        } catch (RuntimeException closing) {
          // after a device fault every free fails too: keep the fault as the error
          ex.addSuppressed(closing);
        }
      }
      throw ex;
    }
  }

  private static HostColumn cpu(Exec exec, EvalInput in, Expr e) {
    Program p = ExprCompiler.compile(e, in.types());
    List<HostColumn> slots = new ArrayList<>();
    for (int index : p.columns()) {
      slots.add((HostColumn) in.columns().get(index));
    }
    return cpu(exec, in, e, p, slots);
  }

  /**
   * Runs {@code p} over {@code slots} (its columns, in {@link Program#columns()} order) on the
   * host: in 64 bits, and where a DECIMAL value outgrew them ({@link Opcode#ERR_WIDE}) again in
   * 128 ({@link CpuEval#runWide}).
   */
  private static HostColumn cpu(Exec exec, EvalInput in, Expr e, Program p, List<HostColumn> slots) {
    int n = in.rows();
    BufferAllocator a = exec.allocator();
    try (ArrowBuf pool = a.buffer(Math.max(1, p.strings().length))) {
      pool.setBytes(0, p.strings());
      CpuEval.Rows rows = CpuEval.run(p, slots, n, pool.memoryAddress());
      if (rows.firstError() != Long.MAX_VALUE && (rows.firstError() & 0xFF) == Opcode.ERR_WIDE) {
        rows = CpuEval.runWide(p, slots, n, pool.memoryAddress());
      }
      if (rows.firstError() != Long.MAX_VALUE) {
        throw rowError(exec, in, e, rows.firstError());
      }
      // string results point into the inputs and the pool, so they are copied while both live
      return p.result().id() == TypeId.STRING ? hostStrings(a, rows, n) : hostValues(a, p, rows, n);
    }
  }

  /**
   * {@link #cpu} over a host copy of the device columns {@code p} reads, the result copied to the
   * device: for the rare program whose DECIMAL values outgrow the device's 64-bit registers.
   */
  private static DeviceColumn onHost(Exec exec, EvalInput in, Expr e, Program p) {
    List<String> names = new ArrayList<>();
    List<DeviceColumn> used = new ArrayList<>();
    for (int index : p.columns()) {
      DeviceColumn c = (DeviceColumn) in.columns().get(index);
      c.retain();
      names.add("c" + names.size());
      used.add(c);
    }
    try (DeviceTable read = new DeviceTable(exec.gpu(), names, used, in.rows());
        HostTable host = read.toHost(exec.allocator(), exec.stream())) {
      List<HostColumn> slots = new ArrayList<>();
      for (int i = 0; i < host.columnCount(); i++) {
        slots.add(host.column(i));
      }
      HostColumn result = cpu(exec, in, e, p, slots);
      try (HostTable out = new HostTable(List.of("expr"), List.of(result), in.rows());
          DeviceTable up = DeviceTable.fromHost(exec.gpu(), out, exec.stream())) {
        DeviceColumn c = up.column(0);
        c.retain();
        return c;
      }
    }
  }

  private static HostColumn hostStrings(BufferAllocator a, CpuEval.Rows rows, int n) {
    List<ArrowBuf> bufs = new ArrayList<>(3);
    try {
      ArrowBuf validity = a.buffer(Math.max(8, 8 * ((n + 63L) / 64)));
      bufs.add(validity);
      validity.setZero(0, validity.capacity());
      ArrowBuf offsets = a.buffer(4L * (n + 1));
      bufs.add(offsets);
      long total = 0;
      int nulls = 0;
      for (int i = 0; i < n; i++) {
        offsets.setInt(4L * i, (int) total);
        if (rows.nulls()[i]) {
          nulls++;
        } else {
          validity.setByte(i >>> 3, validity.getByte(i >>> 3) | (1 << (i & 7)));
          total += rows.lengths()[i];
        }
      }
      if (total > Integer.MAX_VALUE) {
        throw new UserException("the expression's strings hold " + total + " bytes, more than a column's 2 GiB limit");
      }
      offsets.setInt(4L * n, (int) total);
      ArrowBuf chars = a.buffer(Math.max(1, total));
      bufs.add(chars);
      for (int i = 0; i < n; i++) {
        if (!rows.nulls()[i]) {
          MemoryUtil.copyMemory(rows.values()[i], chars.memoryAddress() + offsets.getInt(4L * i), rows.lengths()[i]);
        }
      }
      return new HostColumn(CpuGather.load(a, "expr", DataType.STRING, n, nulls, bufs));
    } finally {
      bufs.forEach(ArrowBuf::close);
    }
  }

  private static HostColumn hostValues(BufferAllocator a, Program p, CpuEval.Rows rows, int n) {
    StoreKind store = storeKind(p.result());
    List<ArrowBuf> bufs = new ArrayList<>(2);
    try {
      int nulls = 0;
      for (boolean isNull : rows.nulls()) {
        nulls += isNull ? 1 : 0;
      }
      long bitmapBytes = Math.max(8, 8 * ((n + 63L) / 64));
      ArrowBuf validity = a.buffer(bitmapBytes);
      bufs.add(validity);
      validity.setZero(0, validity.capacity());
      int width = store == StoreKind.BITS ? 0 : store == StoreKind.D128 || p.result().id() == TypeId.DECIMAL ? 16
          : p.result().byteWidth();
      ArrowBuf data = a.buffer(store == StoreKind.BITS ? bitmapBytes : Math.max(1, (long) n * width));
      bufs.add(data);
      if (store == StoreKind.BITS) {
        data.setZero(0, data.capacity());
      }
      long v = validity.memoryAddress();
      long d = data.memoryAddress();
      boolean[] isNull = rows.nulls();
      long[] values = rows.values();
      long[] high = rows.high();
      boolean wideDecimal = width == 16;
      // in parallel, 64 rows to a validity word (and to a word of BOOL values), so no two
      // threads write one byte
      IntStream.range(0, (n + STORE_CHUNK - 1) / STORE_CHUNK).parallel().forEach(ch -> {
        int end = Math.min(n, (ch + 1) * STORE_CHUNK);
        for (int w = ch * STORE_CHUNK; w < end; w += 64) {
          long valid = 0;
          long trues = 0;
          for (int i = w; i < Math.min(end, w + 64); i++) {
            if (isNull[i]) {
              continue;
            }
            valid |= 1L << (i - w);
            long x = values[i];
            switch (store) {
              case I8 -> MemoryUtil.putByte(d + i, (byte) x);
              case I16 -> MemoryUtil.putShort(d + 2L * i, (short) x);
              case I32 -> MemoryUtil.putInt(d + 4L * i, (int) x);
              case F32 -> MemoryUtil.putInt(d + 4L * i, Float.floatToRawIntBits((float) Double.longBitsToDouble(x)));
              case BITS -> trues |= (x == 1 ? 1L : 0L) << (i - w);
              case I64, F64, D128 -> {
                if (wideDecimal) {
                  // Arrow's DECIMAL layout is 16 bytes whatever the precision
                  MemoryUtil.putLong(d + 16L * i, x);
                  MemoryUtil.putLong(d + 16L * i + 8, high != null ? high[i] : x >> 63);
                } else {
                  MemoryUtil.putLong(d + 8L * i, x);
                }
              }
              default -> throw new InternalException("store " + store + " of a fixed-width result");
            }
          }
          MemoryUtil.putLong(v + w / 8, valid);
          if (store == StoreKind.BITS) {
            MemoryUtil.putLong(d + w / 8, trues);
          }
        }
      });
      return new HostColumn(CpuGather.load(a, "expr", p.result(), n, nulls, bufs));
    } finally {
      bufs.forEach(ArrowBuf::close);
    }
  }

  /**
   * The error of a string cast that failed in {@code row}, naming the text: each string cast
   * of {@code e} runs again on that one row, on the CPU, until one fails.
   */
  private static dev.gpudf.columnar.error.GpudfException castError(Exec exec, EvalInput in, Expr e, int row, int code) {
    List<Expr.Cast> casts = new ArrayList<>();
    collectStringCasts(e, in.types(), casts);
    try (HostTable one = oneRow(exec, in, row)) {
      for (Expr.Cast c : casts) {
        String text;
        try (HostColumn arg = evaluate(exec, one, c.arg())) {
          if (arg.vector().isNull(0)) {
            continue;
          }
          text = arg.vector().getObject(0).toString();
        }
        try (HostColumn ok = evaluate(exec, one, c)) {
          continue;
        } catch (UserException failed) {
          return code == Opcode.ERR_INEXACT
              ? new dev.gpudf.columnar.error.NotSupportedException("cannot convert '" + text + "' to " + c.type()
                  + " exactly (more than 2^53 in its digits or a power of ten beyond 22) in row " + row)
              : new UserException("cannot cast '" + text + "' to " + c.type() + " in row " + row);
        }
      }
    }
    return new UserException("a string cast failed in row " + row);
  }

  private static void collectStringCasts(Expr e, List<DataType> input, List<Expr.Cast> out) {
    if (e instanceof Expr.Cast c) {
      collectStringCasts(c.arg(), input, out);
      if (c.type().id() != TypeId.STRING && typeOf(c.arg(), input).id() == TypeId.STRING) {
        out.add(c);
      }
    } else if (e instanceof Expr.Call c) {
      c.args().forEach(a -> collectStringCasts(a, input, out));
    }
  }

  /** Row {@code row} of the input as a one-row host table (copied from the device if it is there). */
  private static HostTable oneRow(Exec exec, EvalInput in, int row) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < in.width(); i++) {
      names.add("c" + i);
      in.columns().get(i).retain();
    }
    if (in.onDevice()) {
      List<DeviceColumn> cols = in.columns().stream().map(c -> (DeviceColumn) c).toList();
      try (DeviceTable all = new DeviceTable(exec.gpu(), names, cols, in.rows());
          DeviceTable one = Slice.slice(exec, all, row, 1)) {
        return one.toHost(exec.allocator(), exec.stream());
      }
    }
    List<HostColumn> cols = in.columns().stream().map(c -> (HostColumn) c).toList();
    try (HostTable all = new HostTable(names, cols, in.rows())) {
      return Slice.slice(exec, all, row, 1);
    }
  }

  /** The type {@code e} evaluates to over columns of {@code input}. */
  public static DataType typeOf(Expr e, List<DataType> input) {
    return ExprCompiler.compile(StringBuild.placeholders(e, input), input).result();
  }

  static StoreKind storeKind(DataType t) {
    return switch (t.id()) {
      case INT8 -> StoreKind.I8;
      case INT16 -> StoreKind.I16;
      case INT32, DATE -> StoreKind.I32;
      case INT64, TIMESTAMP -> StoreKind.I64;
      case FLOAT32 -> StoreKind.F32;
      case FLOAT64 -> StoreKind.F64;
      case BOOL -> StoreKind.BITS;
      case DECIMAL -> t.isDecimal64() ? StoreKind.I64 : StoreKind.D128;
      case STRING -> StoreKind.STRLEN;
    };
  }

  // set while a failed cast is re-run to find its text, so that run's own failure stays unnamed
  private static final ThreadLocal<Boolean> NAMING = ThreadLocal.withInitial(() -> false);

  private static dev.gpudf.columnar.error.GpudfException rowError(Exec exec, EvalInput in, Expr e, long first) {
    long row = first >>> 8;
    int code = (int) (first & 0xFF);
    if ((code == Opcode.ERR_CAST || code == Opcode.ERR_INEXACT) && !NAMING.get()) {
      NAMING.set(true);
      try {
        return castError(exec, in, e, (int) row, code);
      } finally {
        NAMING.set(false);
      }
    }
    if (code == Opcode.ERR_CAST || code == Opcode.ERR_INEXACT) {
      return new UserException("a string cast failed in row " + row);
    }
    if (code == Opcode.ERR_WIDE) {
      return new dev.gpudf.columnar.error.NotSupportedException("row " + row
          + " holds a DECIMAL value beyond 18 digits, which expressions do not support yet");
    }
    String what = switch (code) {
      case Opcode.ERR_DIV_ZERO -> "division by zero";
      case Opcode.ERR_DOMAIN -> "argument outside the function's domain (SQRT of a negative, LN of a non-positive number)";
      case Opcode.ERR_NEGATIVE_LENGTH -> "negative SUBSTRING length";
      default -> "numeric overflow";
    };
    return new UserException(what + " in row " + row);
  }
}
