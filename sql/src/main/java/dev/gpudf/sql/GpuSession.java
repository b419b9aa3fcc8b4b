package dev.gpudf.sql;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.columnar.error.InternalException;
import dev.gpudf.columnar.error.NotSupportedException;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.Exec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.calcite.config.CalciteConnectionConfigImpl;
import org.apache.calcite.config.CalciteConnectionProperty;
import org.apache.calcite.jdbc.CalciteSchema;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.RelOptRule;
import org.apache.calcite.prepare.CalciteCatalogReader;
import org.apache.calcite.plan.hep.HepPlanner;
import org.apache.calcite.plan.hep.HepProgram;
import org.apache.calcite.plan.hep.HepProgramBuilder;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.RelRoot;
import org.apache.calcite.rel.RelVisitor;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.RelFactories;
import org.apache.calcite.rel.core.TableScan;
import org.apache.calcite.rel.logical.LogicalAggregate;
import org.apache.calcite.rel.logical.LogicalFilter;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.logical.LogicalSort;
import org.apache.calcite.rel.logical.LogicalUnion;
import org.apache.calcite.rel.rules.FilterProjectTransposeRule;
import org.apache.calcite.rel.type.RelDataType;
import org.apache.calcite.rex.RexDynamicParam;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.rex.RexShuttle;
import org.apache.calcite.rex.RexUtil;
import org.apache.calcite.schema.SchemaPlus;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.sql.parser.SqlParseException;
import org.apache.calcite.sql.parser.SqlParser;
import org.apache.calcite.sql.validate.SqlValidator;
import org.apache.calcite.sql.validate.SqlValidatorUtil;
import org.apache.calcite.sql2rel.RelDecorrelator;
import org.apache.calcite.sql2rel.SqlToRelConverter;
import org.apache.calcite.sql2rel.StandardConvertletTable;
import org.apache.calcite.tools.FrameworkConfig;
import org.apache.calcite.tools.Frameworks;
import org.apache.calcite.tools.RelBuilder;
import org.apache.calcite.tools.ValidationException;

/**
 * Where gpudf queries run: a {@link Catalog} of tables (in GPU memory for a GPU session, in host
 * memory for a CPU one), SQL and {@link DataFrame}s over them, and JDBC access through {@link
 * #jdbcUrl}. Calcite parses and validates, a Hep pass folds constant expressions and shapes
 * joins, {@link GpuRules} convert to {@link GpuRel} operators, and the plan runs on the
 * session's backend. What has no operator yet (window functions, say) raises {@link
 * NotSupportedException}. The session owns its tables; whoever opens it closes it (the
 * {@link Gpu} and allocator stay the caller's).
 * <pre>{@code
 * try (RootAllocator allocator = new RootAllocator(); Gpu gpu = Gpu.open(0);
 *     GpuSession session = GpuSession.gpu(gpu, allocator)) {
 *   session.createTable("orders", ordersRoot);
 *   try (VectorSchemaRoot r = session.query("SELECT COUNT(*) FROM orders")) { ... }
 *   session.table("orders").groupBy("o_orderstatus").agg(count().as("n")).show(10);
 * }
 * }</pre>
 */
public final class GpuSession implements AutoCloseable {
  private final Gpu gpu;
  private final BufferAllocator allocator;
  private final Catalog catalog;
  private final FileFunctions files;
  private final SchemaPlus frameSchema = Frameworks.createRootSchema(false);
  private final java.util.concurrent.atomic.AtomicLong plansMade = new java.util.concurrent.atomic.AtomicLong();
  // plans are stateless operator trees, so one can serve every execution of its statement
  private final Map<Object, GpuRel> plans = new java.util.LinkedHashMap<>(16, 0.75f, true) {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(Map.Entry<Object, GpuRel> eldest) {
      return size() > 256;
    }
  };
  private RelBuilder frames;
  private final JoinOrder joinOrder;
  private String jdbcId;
  private volatile MemoryLimits memoryLimits = MemoryLimits.fromSettings();
  private static final Map<String, GpuSession> JDBC_SESSIONS = new java.util.concurrent.ConcurrentHashMap<>();

  private GpuSession(Gpu gpu, BufferAllocator allocator) {
    this.gpu = gpu;
    this.allocator = allocator;
    this.catalog = new Catalog(gpu, allocator);
    this.files = new FileFunctions(catalog, allocator);
    // a GPU catalog keeps the columns a count reads, so a count takes the early read of chunk 0;
    // a CPU catalog reads every scan anew, so its count reads only the filter's columns and
    // leaves the early read to the scan
    this.joinOrder = new JoinOrder(new ColumnStats(catalog, () -> context(List.of()),
        table -> gpu == null || planning.get() == null ? null : planning.get().take(table)));
    warmUp();
  }

  /**
   * Starts this process's warm-ups ({@link PlannerWarmUp}, {@link ArrowSchemaWarmUp}) now, once a
   * process; a session's opening starts them too. For a caller that opens a device before its
   * session: the CUDA context takes 290-460 ms on the GPU host and the session's opening (Calcite's
   * classes) 230-380 ms after it (benchmarks/results/2026-12-07-cold-start-sf1-h100-s57.txt), which
   * the warm-ups' threads then overlap.
   */
  public static void warmUp() {
    ArrowSchemaWarmUp.startOnce();
    PlannerWarmUp.startOnce();
  }

  /**
   * Whether a {@code backend} setting ({@code cpu}, {@code gpu}, or {@code auto}: the GPU when one
   * is usable) means a GPU session; anything else is a {@link UserException}.
   */
  public static boolean usesGpu(String backend) {
    return switch (backend.toLowerCase(java.util.Locale.ROOT)) {
      case "gpu" -> true;
      case "cpu" -> false;
      case "auto" -> dev.gpudf.columnar.cuda.Cuda.isAvailable();
      default -> throw new UserException("backend must be cpu, gpu or auto, not '" + backend + "'");
    };
  }

  /** A session on the CPU backend; results and tables come from {@code allocator}. */
  public static GpuSession cpu(BufferAllocator allocator) {
    return new GpuSession(null, allocator);
  }

  /** A session whose tables live on {@code gpu} and whose operators run there. */
  public static GpuSession gpu(Gpu gpu, BufferAllocator allocator) {
    return new GpuSession(gpu, allocator);
  }

  /** The device of a GPU session; null on the CPU backend. */
  public Gpu gpu() {
    return gpu;
  }

  /** The allocator the session's results (and its host tables) come from. */
  public BufferAllocator allocator() {
    return allocator;
  }

  public Catalog catalog() {
    return catalog;
  }

  /** Runs {@code sql} and returns its result as Arrow vectors from the session's allocator; the caller closes it. */
  public VectorSchemaRoot query(String sql) {
    return query(sql, List.of());
  }

  /**
   * Runs {@code sql} with {@code parameters} as the values of its {@code ?} markers, in order (a
   * null element is SQL NULL; values are converted to each marker's type, as {@link
   * #parameterTypes} reports it). The plan is cached without the values, so running the
   * statement again with others does not plan it again. The caller closes the result.
   */
  public VectorSchemaRoot query(String sql, List<Object> parameters) {
    return query(sql, parameters, timings -> { });
  }

  /**
   * Where one query's time went: planning (near zero when the plan came from the session's cache),
   * execution until the result table existed (device work waited for), the result's transfer into
   * Arrow vectors on the host, and the device pool's peak bytes during the query (0 on the CPU).
   */
  public record QueryTimings(long planNanos, long executeNanos, long transferNanos, long peakDeviceBytes,
      PlanPhases planPhases) {
    /** Timings of a query whose plan's phases are not known (one from the plan cache). */
    public QueryTimings(long planNanos, long executeNanos, long transferNanos, long peakDeviceBytes) {
      this(planNanos, executeNanos, transferNanos, peakDeviceBytes, null);
    }
  }

  /**
   * Where a plan's time went, for a first run's report: parsing, validation, conversion to
   * Calcite's logical operators, the logical rewrites (sub-queries decorrelated, rules, the join
   * order with the counts it measures, which may read a small file table), and the physical plan
   * (the support check and gpudf's operators). Null in {@link QueryTimings} when the plan came from
   * the session's cache.
   */
  public record PlanPhases(long parseNanos, long validateNanos, long convertNanos, long rewriteNanos,
      long physicalNanos) {
    /** The phases as "parse 1.2 + validate 3.4 + ..." in milliseconds. */
    public String text() {
      return String.format(java.util.Locale.ROOT, "parse %.1f + validate %.1f + convert %.1f + rewrite %.1f + physical %.1f",
          parseNanos / 1e6, validateNanos / 1e6, convertNanos / 1e6, rewriteNanos / 1e6, physicalNanos / 1e6);
    }
  }

  /** {@link #query(String, List)} that reports its {@link QueryTimings} to {@code timings}. */
  public VectorSchemaRoot query(String sql, List<Object> parameters, java.util.function.Consumer<QueryTimings> timings) {
    return query(sql, parameters, timings, Cancellation.start());
  }

  /**
   * {@link #query(String, List, java.util.function.Consumer)} that stops, with a {@link
   * dev.gpudf.columnar.error.QueryCancelledException}, when {@code cancellation} is cancelled or
   * runs past its time limit.
   */
  public VectorSchemaRoot query(String sql, List<Object> parameters, java.util.function.Consumer<QueryTimings> timings,
      Cancellation cancellation) {
    long t0 = System.nanoTime();
    try (EarlyReads early = new EarlyReads()) {
      PlanClock clock = new PlanClock();
      planClock.set(clock);
      GpuRel plan;
      try {
        plan = planned(sql, early);
      } finally {
        planClock.remove();
      }
      PlanPhases phases = clock.planned ? clock.phases() : null;
      int expected = parameterTypes(plan).size();
      if (parameters.size() != expected) {
        throw new UserException("the statement has " + expected + " parameters, " + parameters.size() + " were given");
      }
      return rows(plan, parameters, cancellation, System.nanoTime() - t0, phases, timings, early);
    }
  }

  /**
   * Runs {@code plan} within the session's {@link MemoryLimits}: its host buffers come from an
   * allocator of the query's own, bounded by the host limit, and the rows it returns are accounted
   * to the session's allocator, so the query's allocator closes with the query (and fails it if
   * anything else of it was left behind). The caller closes the result.
   */
  private VectorSchemaRoot rows(GpuRel plan, List<Object> parameters, Cancellation cancellation, long planNanos,
      PlanPhases phases, java.util.function.Consumer<QueryTimings> timings, EarlyReads early) {
    MemoryLimits limits = memoryLimits;
    // a cancelled query stops at its next host allocation too (a CPU operator between its loops)
    org.apache.arrow.memory.AllocationListener stopping = new org.apache.arrow.memory.AllocationListener() {
      @Override
      public void onPreAllocation(long size) {
        cancellation.check();
      }
    };
    BufferAllocator host = allocator.newChildAllocator("query", stopping, 0,
        limits.hostBytes() == 0 ? allocator.getLimit() : limits.hostBytes());
    try (host) {
      long t1 = System.nanoTime();
      if (gpu != null) {
        gpu.pool().resetPeak();
      }
      try (QueryContext ctx = context(parameters, cancellation, host, limits).adopt(early);
          Table<?> result = ctx.execute(plan)) {
        if (ctx.exec().hasGpu()) {
          ctx.exec().stream().synchronize();
        }
        long t2 = System.nanoTime();
        VectorSchemaRoot out = result.toArrow(allocator);
        timings.accept(new QueryTimings(planNanos, t2 - t1, System.nanoTime() - t2,
            gpu == null ? 0 : gpu.pool().stats().peak(), phases));
        return out;
      }
    } catch (org.apache.arrow.memory.OutOfMemoryException e) {
      if (limits.hostBytes() == 0) {
        throw e;
      }
      throw dev.gpudf.columnar.error.QueryMemoryLimitException.host(host.getPeakMemoryAllocation(), limits.hostBytes(), MemoryLimits.HOST_SETTING);
    }
  }

  /** The memory each query of this session may hold ({@link MemoryLimits#fromSettings} until set). */
  public MemoryLimits memoryLimits() {
    return memoryLimits;
  }

  /** Sets the memory each later query of this session may hold. */
  public void limitQueryMemory(MemoryLimits limits) {
    memoryLimits = java.util.Objects.requireNonNull(limits);
  }


  /**
   * Runs {@code sql} and keeps its result on the device, for a consumer that reads it there (a
   * hand-off to another process): a table the caller closes, its work finished. A CPU session
   * has no device: {@link NotSupportedException}.
   */
  public DeviceTable queryOnDevice(String sql) {
    if (gpu == null) {
      throw new NotSupportedException("this session runs on the CPU backend: its results are not on a device");
    }
    GpuRel plan = planned(sql);
    if (!parameterTypes(plan).isEmpty()) {
      throw new UserException("a statement kept on the device takes no parameters");
    }
    try (QueryContext ctx = resultContext()) {
      Table<?> result = ctx.execute(plan);
      if (result instanceof DeviceTable d) {
        ctx.exec().stream().synchronize();
        return d;
      }
      // an operator with only a CPU twin at the top (VALUES, say) leaves its result on the host
      try (Table<?> host = result) {
        DeviceTable d = DeviceTable.fromHost(gpu, (dev.gpudf.columnar.HostTable) host, ctx.exec().stream());
        ctx.exec().stream().synchronize();
        return d;
      }
    }
  }

  /** The types of {@code sql}'s {@code ?} markers, in order, as Calcite inferred them from where they stand. */
  public List<RelDataType> parameterTypes(String sql) {
    return returnsRows(sql) ? parameterTypes(planned(sql)) : Statements.parameterTypes(this, sql);
  }

  private static List<RelDataType> parameterTypes(RelNode plan) {
    java.util.SortedMap<Integer, RelDataType> found = new java.util.TreeMap<>();
    new RelVisitor() {
      @Override
      public void visit(RelNode node, int ordinal, RelNode parent) {
        if (node instanceof org.apache.calcite.rel.core.Sort sort
            && (sort.fetch instanceof RexDynamicParam || sort.offset instanceof RexDynamicParam)) {
          throw new NotSupportedException("parameters are supported in expressions only (not in LIMIT or OFFSET)");
        }
        node.accept(new RexShuttle() {
          @Override
          public RexNode visitDynamicParam(RexDynamicParam param) {
            found.put(param.getIndex(), param.getType());
            return param;
          }
        });
        super.visit(node, ordinal, parent);
      }
    }.go(plan);
    if (!found.isEmpty() && found.lastKey() != found.size() - 1) {
      throw new InternalException("parameter markers " + found.keySet() + " are not all in the plan");
    }
    return List.copyOf(found.values());
  }

  /**
   * The plan of {@code sql}, from the session's cache when the same text was planned before
   * against tables of the same names and column types (a re-executed statement is not planned
   * again; a table replaced by one of another shape is).
   */
  private GpuRel planned(String statement) {
    return planned(statement, null);
  }

  /**
   * {@link #planned(String)}; when it plans, the tables' first chunks are read meanwhile into
   * {@code early} (null: not), for the query about to run.
   */
  private GpuRel planned(String statement, EarlyReads early) {
    ShowStatements.Rows shown = ShowStatements.rows(this, statement);
    if (shown != null) {
      // a cluster of its own, over no tables (the rows are literals): the DataFrames' builder is
      // the synchronized methods' to change
      RelOptCluster cluster = new SqlFrontEnd(Frameworks.createRootSchema(false), VALIDATION, PARSER, OPERATORS,
          GpudfTypeSystem.INSTANCE).cluster();
      return strings(cluster, cluster.traitSetOf(GpuRel.CONVENTION), shown.names(), shown.rows());
    }
    String sql = files.rewrite(statement);
    Map<String, List<Object>> shapes = new java.util.TreeMap<>();
    catalog.shapes().forEach((name, t) -> shapes.put(name, List.of(t.names(), t.types(), t.chunks())));
    Object key = List.of(sql, shapes);
    synchronized (plans) {
      GpuRel hit = plans.get(key);
      if (hit != null) {
        return hit;
      }
    }
    GpuRel plan = plan(sql, early);
    synchronized (plans) {
      plans.put(key, plan);
    }
    return plan;
  }

  /** The column names and SQL types {@code sql} returns, from its (cached) plan; nothing runs. */
  public RelDataType resultType(String sql) {
    return planned(sql).getRowType();
  }

  /** {@link #resultType} as an Arrow schema (the columns of {@link #query}'s result); nothing runs. */
  public org.apache.arrow.vector.types.pojo.Schema resultSchema(String sql) {
    List<org.apache.calcite.rel.type.RelDataTypeField> fields = resultType(sql).getFieldList();
    return arrowSchema(fields.stream().map(f -> f.getName()).toList(), fields.stream().map(f -> f.getType()).toList());
  }

  /** The {@code ?} markers of {@code sql} as an Arrow schema of nullable fields {@code parameter_1}, ...; nothing runs. */
  public org.apache.arrow.vector.types.pojo.Schema parameterSchema(String sql) {
    List<RelDataType> types = parameterTypes(sql);
    return arrowSchema(java.util.stream.IntStream.range(0, types.size()).mapToObj(i -> "parameter_" + (i + 1)).toList(), types);
  }

  private static org.apache.arrow.vector.types.pojo.Schema arrowSchema(List<String> names, List<RelDataType> types) {
    List<org.apache.arrow.vector.types.pojo.Field> fields = new java.util.ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      fields.add(dev.gpudf.columnar.ArrowTypes.toArrowField(names.get(i), SqlTypes.fromCalcite(types.get(i))));
    }
    return new org.apache.arrow.vector.types.pojo.Schema(fields);
  }

  /** The columns of table {@code name} as an Arrow schema. */
  public org.apache.arrow.vector.types.pojo.Schema tableSchema(String name) {
    Catalog.Shape t = catalog.shape(name);
    List<org.apache.arrow.vector.types.pojo.Field> fields = new java.util.ArrayList<>();
    for (int i = 0; i < t.names().size(); i++) {
      fields.add(dev.gpudf.columnar.ArrowTypes.toArrowField(t.names().get(i), t.types().get(i)));
    }
    return new org.apache.arrow.vector.types.pojo.Schema(fields);
  }

  /**
   * Appends {@code rows} to table {@code name} as {@code INSERT INTO name SELECT * FROM rows}
   * would (column types converted, constraints checked, nothing kept on failure) and returns how
   * many rows it added; the caller keeps {@code rows}.
   */
  public long insert(String name, VectorSchemaRoot rows) {
    return insertAll(name, catalog.registerHidden(rows));
  }

  /**
   * {@link #insert(String, VectorSchemaRoot)} of rows already on this session's device; the caller
   * keeps {@code rows}. Rows of the table's own column types, into a table without keys to check,
   * are appended as they are, on the device; others go through the INSERT (via host memory).
   */
  public long insert(String name, DeviceTable rows) {
    if (catalog.constraints(name).keys().isEmpty() && catalog.shape(name).types().equals(rows.types())) {
      catalog.append(name, rows);
      return rows.rowCount();
    }
    return insertAll(name, catalog.registerHidden(rows));
  }

  /** Inserts every row of hidden table {@code hidden} into {@code name}, and drops {@code hidden}. */
  private long insertAll(String name, String hidden) {
    try {
      return update("INSERT INTO \"" + name.toLowerCase(java.util.Locale.ROOT).replace("\"", "\"\"") + "\" SELECT * FROM \""
          + hidden + "\"");
    } finally {
      catalog.drop(hidden);
    }
  }

  /** Whether {@code sql} is an INSERT of one VALUES row of {@code ?} markers only, which {@link #insertBound} takes. */
  public boolean insertsBoundRows(String sql) {
    return Statements.insertFrom(sql, "") != null;
  }

  /**
   * Runs {@code sql}, an INSERT of one VALUES row of {@code ?} markers ({@link #insertsBoundRows}),
   * for every row of {@code rows} (the markers' values, by position) as one statement: all the
   * rows go in or none does. Returns how many it added; the caller keeps {@code rows}.
   */
  public long insertBound(String sql, VectorSchemaRoot rows) {
    String hidden = catalog.registerHidden(rows);
    try {
      String insert = Statements.insertFrom(sql, hidden);
      if (insert == null) {
        throw new UserException("not an INSERT of one VALUES row of ? markers: " + sql);
      }
      return update(insert);
    } finally {
      catalog.drop(hidden);
    }
  }

  /** How many statements were planned (not served from the plan cache) so far. */
  public long plansMade() {
    return plansMade.get();
  }

  /**
   * How every statement is parsed: unquoted names fold to lower case; DDL is part of the grammar;
   * {@code a % b} is MOD, as PostgreSQL and DuckDB write it (the one rule of the parser's
   * conformance that differs from Calcite's default; the validator keeps the default, see {@link #config}).
   */
  static final SqlParser.Config PARSER = SqlParser.config().withCaseSensitive(false)
      .withUnquotedCasing(org.apache.calcite.avatica.util.Casing.TO_LOWER)
      .withParserFactory(org.apache.calcite.sql.parser.ddl.SqlDdlParserImpl.FACTORY)
      .withConformance(new org.apache.calcite.sql.validate.SqlDelegatingConformance(
          org.apache.calcite.sql.validate.SqlConformanceEnum.DEFAULT) {
        @Override
        public boolean isPercentRemainderAllowed() {
          return true;
        }
      });

  /** Whether {@code sql} is a query (it returns rows) rather than DDL or DML (see {@link #update}). */
  public boolean returnsRows(String sql) {
    if (Statements.isIndexStatement(sql) || Statements.isCopy(sql)) {
      return false;
    }
    if (ShowStatements.matches(sql)) {
      return true;
    }
    String text = FileFunctions.placeholders(sql);
    org.apache.calcite.sql.SqlKind kind = Statements.parse(text).getKind();
    return Statements.explainedQuery(text) != null || kind == org.apache.calcite.sql.SqlKind.EXPLAIN
        || kind.belongsTo(org.apache.calcite.sql.SqlKind.QUERY);
  }

  /**
   * Runs a DDL or DML statement and returns the number of rows it inserted (0 for DDL):
   * {@code CREATE TABLE [IF NOT EXISTS] t (columns)}, {@code CREATE TABLE t AS query},
   * {@code INSERT INTO t [(columns)] query-or-VALUES}, {@code DROP TABLE [IF EXISTS] t}, and
   * {@code COPY (query) TO 'file' [(FORMAT parquet|csv|arrow)]} into the data directory (the rows written).
   */
  public long update(String sql) {
    return update(sql, List.of());
  }

  /**
   * {@link #update(String)} with {@code parameters} as the values of its {@code ?} markers (an
   * INSERT's values or its query's; see {@link #parameterTypes}); DDL takes none.
   */
  public long update(String sql, List<Object> parameters) {
    return Statements.run(this, Statements.isCopy(sql) ? sql : files.rewrite(sql), parameters);
  }

  /** The physical plan of {@code sql}, one operator a line (an operator several parents read, once: {@link PlanText}). */
  public String explain(String sql) {
    return PlanText.of(plan(sql));
  }

  /**
   * The bytes {@code sql} must read at least: every column of every table chunk its plan scans,
   * once, as the backend stores it ({@link Catalog#scanBytes}): a roofline divides it by the
   * memory's bandwidth.
   */
  public long scanBytes(String sql) {
    List<CatalogTable> scans = new ArrayList<>();
    java.util.Set<RelNode> visited = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    new org.apache.calcite.rel.RelVisitor() {
      @Override
      public void visit(RelNode node, int ordinal, RelNode parent) {
        if (!visited.add(node)) {
          return;
        }
        if (node instanceof org.apache.calcite.rel.core.TableScan scan) {
          CatalogTable t = scan.getTable().unwrap(CatalogTable.class);
          if (t != null) {
            scans.add(t);
          }
        }
        super.visit(node, ordinal, parent);
      }
    }.go(plan(sql));
    return catalog.scanBytes(scans);
  }

  /** Runs {@code frame} and registers its result as table {@code name}. */
  public void createTable(String name, DataFrame frame) {
    try (VectorSchemaRoot rows = frame.toArrow()) {
      catalog.register(name, rows);
    }
  }

  /** Registers a copy of {@code rows} as table {@code name} (on the device for a GPU session); the caller keeps {@code rows}. */
  public void createTable(String name, VectorSchemaRoot rows) {
    catalog.register(name, rows);
  }

  /** A lazy {@link DataFrame} over catalog table {@code name}. */
  public synchronized DataFrame table(String name) {
    try {
      return new DataFrame(this, frames().scan(name.toLowerCase(java.util.Locale.ROOT)).build());
    } catch (RuntimeException e) {
      throw new UserException("no table '" + name + "' (tables: " + catalog.names() + ")", e);
    }
  }

  /**
   * A lazy {@link DataFrame} over the rows of query {@code sql}, which is parsed and validated
   * now (a syntax error or an unknown name fails here) and runs when the frame does.
   */
  public synchronized DataFrame sql(String sql) {
    RelOptCluster cluster = frames().getCluster();
    SqlNode parsed;
    StatementLimits.checkText(sql);
    try {
      parsed = StatementLimits.check(SqlParser.create(sql, PARSER).parseQuery());
    } catch (SqlParseException e) {
      throw Statements.parseError(e, sql);
    }
    if (!parsed.getKind().belongsTo(org.apache.calcite.sql.SqlKind.QUERY)) {
      throw new UserException("sql() takes a query; run DDL and DML with update()");
    }
    java.util.Properties caseInsensitive = new java.util.Properties();
    caseInsensitive.setProperty(CalciteConnectionProperty.CASE_SENSITIVE.camelName(), "false");
    CalciteCatalogReader reader = new CalciteCatalogReader(CalciteSchema.from(frameSchema), List.of(),
        cluster.getTypeFactory(), new CalciteConnectionConfigImpl(caseInsensitive));
    SqlValidator validator = SqlValidatorUtil.newValidator(SqlStdOperatorTable.instance(), reader,
        cluster.getTypeFactory(), SqlValidator.Config.DEFAULT.withIdentifierExpansion(true));
    SqlNode validated;
    try {
      validated = validator.validate(parsed);
    } catch (org.apache.calcite.runtime.CalciteContextException e) {
      throw new UserException(e.getMessage(), e);
    }
    SqlToRelConverter converter = new SqlToRelConverter(null, validator, reader, cluster,
        StandardConvertletTable.INSTANCE, SqlToRelConverter.config().withTrimUnusedFields(false));
    return new DataFrame(this, converter.convertQuery(validated, false, true).project());
  }

  /** Reads files into lazy {@link DataFrame}s (each file is loaded once, into the session's memory). */
  public FrameReader read() {
    return new FrameReader(this);
  }

  /**
   * A {@code jdbc:gpudf:} URL whose connections (in this JVM, while this session is open) query
   * this session's tables, including those the connections create; closing such a connection
   * leaves the session open.
   */
  public synchronized String jdbcUrl() {
    if (jdbcId == null) {
      jdbcId = java.util.UUID.randomUUID().toString();
      JDBC_SESSIONS.put(jdbcId, this);
    }
    return "jdbc:gpudf:session=" + jdbcId;
  }

  /** The open session whose {@link #jdbcUrl} holds {@code id}: how the JDBC driver finds it. */
  public static GpuSession byJdbcId(String id) {
    GpuSession s = JDBC_SESSIONS.get(id);
    if (s == null) {
      throw new UserException("no open session '" + id + "' in this JVM");
    }
    return s;
  }

  /** A frame over a copy of {@code rows}, which the session keeps until it closes; the caller keeps {@code rows}. */
  DataFrame frameOf(VectorSchemaRoot rows) {
    return table(catalog.registerHidden(rows));
  }

  /** A frame over rows kept in files ({@link Catalog#register(String, dev.gpudf.sql.files.ChunkSource)}), which the catalog now owns. */
  DataFrame frameOf(dev.gpudf.sql.files.ChunkSource source) {
    return table(catalog.registerHidden(source));
  }

  /** The builder of the session's frames, its schema holding every catalog table as it is now. */
  private RelBuilder frames() {
    // DataFrames of one session share one cluster, so they can be joined
    if (frames == null) {
      frames = RelBuilder.create(Frameworks.newConfigBuilder(config()).defaultSchema(frameSchema).build());
    }
    addTables(frameSchema);
    return frames;
  }

  /**
   * Runs {@code plan}; the caller closes the result, a device table on a GPU session. The
   * session's device limit bounds it; its host buffers are the caller's result, so they come
   * from the session's allocator, not one bounded by the host limit.
   */
  Table<?> collect(GpuRel plan) {
    try (QueryContext ctx = resultContext()) {
      return ctx.execute(plan);
    }
  }

  VectorSchemaRoot execute(GpuRel plan, List<Object> parameters) {
    return rows(plan, parameters, Cancellation.start(), 0, null, timings -> { }, null);
  }

  /** A context for a query whose result outlives it: the device limit applies, host memory is the session's. */
  private QueryContext resultContext() {
    return context(List.of(), Cancellation.start(), allocator, new MemoryLimits(memoryLimits.deviceBytes(), 0));
  }

  private QueryContext context(List<Object> parameters) {
    return context(parameters, Cancellation.start());
  }

  private QueryContext context(List<Object> parameters, Cancellation cancellation) {
    return context(parameters, cancellation, allocator, MemoryLimits.NONE);
  }

  private QueryContext context(List<Object> parameters, Cancellation cancellation, BufferAllocator host,
      MemoryLimits limits) {
    Exec exec = gpu == null ? Exec.onCpu(host)
        : Exec.onGpu(gpu, host).limitDeviceMemory(limits.deviceBytes(), MemoryLimits.DEVICE_SETTING);
    return new QueryContext(exec, catalog, parameters, cancellation);
  }

  private FrameworkConfig config() {
    return Frameworks.newConfigBuilder()
        .context(org.apache.calcite.plan.Contexts.of(VALIDATION))
        .defaultSchema(schema())
        .parserConfig(PARSER)
        .typeSystem(GpudfTypeSystem.INSTANCE)
        .executor(ConstantFolder.INSTANCE)
        .operatorTable(OPERATORS)
        .build();
  }

  /**
   * Names as the validator resolves them: case-insensitive, in Calcite's default conformance
   * (the parser's differs, and a planner would take the parser's for the validator's, which takes
   * only Calcite's named ones).
   */
  private static final CalciteConnectionConfigImpl VALIDATION = new CalciteConnectionConfigImpl(new java.util.Properties())
      .set(CalciteConnectionProperty.CONFORMANCE, "DEFAULT")
      .set(CalciteConnectionProperty.CASE_SENSITIVE, "false");

  /**
   * The standard operators, then those of PostgreSQL's dialect that users bring (Calcite's
   * library of them: {@code concat}, {@code left}, {@code right}, {@code lpad}, {@code ilike},
   * ...). A function the executor does not know is a {@link NotSupportedException} naming it.
   */
  private static final org.apache.calcite.sql.SqlOperatorTable OPERATORS = org.apache.calcite.sql.util.SqlOperatorTables.chain(
      org.apache.calcite.sql.fun.SqlStdOperatorTable.instance(),
      org.apache.calcite.sql.util.SqlOperatorTables.of(DateParts.DATE_TRUNC),
      org.apache.calcite.sql.fun.SqlLibraryOperatorTableFactory.INSTANCE.getOperatorTable(
          org.apache.calcite.sql.fun.SqlLibrary.POSTGRESQL));

  /** Calcite wraps the validator's message (with its line and column) in two exceptions; keep only that message. */
  private static String validationMessage(ValidationException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof org.apache.calcite.runtime.CalciteContextException context) {
        return context.getMessage();
      }
    }
    return e.getMessage();
  }

  /** The physical plan of {@code sql}, planned now (not from the session's cache); package-private for tests. */
  GpuRel plan(String sql) {
    return plan(sql, null);
  }

  private GpuRel plan(String sql, EarlyReads early) {
    StatementLimits.checkText(sql);
    planning.set(early);
    try {
      return planChecked(sql, early);
    } catch (StackOverflowError e) {
      // the limits keep real statements well inside the stack; this is the last guard, so that
      // an unforeseen shape is a refused statement and not a dead thread
      throw new UserException("the statement is nested too deeply to plan; simplify it", e);
    } finally {
      planning.remove();
    }
  }

  // the early reads of the statement this thread is planning (see ColumnStats), or null
  private final ThreadLocal<EarlyReads> planning = new ThreadLocal<>();
  // where the statement this thread's query plans adds each phase's time (see query), or null
  private final ThreadLocal<PlanClock> planClock = new ThreadLocal<>();

  /** The nanos a statement's planning spent in each phase (summed over its re-validations), and whether it was planned at all. */
  private static final class PlanClock {
    long parse;
    long validate;
    long convert;
    long rewrite;
    long physical;
    boolean planned;

    PlanPhases phases() {
      return new PlanPhases(parse, validate, convert, rewrite, physical);
    }
  }

  private GpuRel planChecked(String sql, EarlyReads early) {
    plansMade.incrementAndGet();
    PlanClock clock = planClock.get();
    if (clock == null) {
      clock = new PlanClock();
    }
    clock.planned = true;
    return planTimed(sql, early, clock);
  }

  private GpuRel planTimed(String sql, EarlyReads early, PlanClock clock) {
    List<DateArithmetic.Fix> fixes = new ArrayList<>();
    while (true) {
      try {
        long t0 = System.nanoTime();
        SqlFrontEnd planner = new SqlFrontEnd(schema(), VALIDATION, PARSER, OPERATORS, GpudfTypeSystem.INSTANCE);
        String explainedQuery = Statements.explainedQuery(sql);
        SqlNode parsed = DateArithmetic.apply(StatementLimits.check(planner.parse(explainedQuery != null ? explainedQuery : sql)),
            fixes);
        long t1 = System.nanoTime();
        clock.parse += t1 - t0;
        boolean explain = explainedQuery != null || parsed instanceof org.apache.calcite.sql.SqlExplain;
        if (parsed instanceof org.apache.calcite.sql.SqlExplain e) {
          if (e.getFormat() != org.apache.calcite.sql.SqlExplainFormat.TEXT) {
            throw new NotSupportedException("EXPLAIN ... AS " + e.getFormat() + " is not supported: EXPLAIN gives the plan as text");
          }
          parsed = e.getExplicandum();
        }
        if (parsed.getKind().belongsTo(org.apache.calcite.sql.SqlKind.DDL)
            || parsed.getKind().belongsTo(org.apache.calcite.sql.SqlKind.DML)) {
          String kind = parsed.getKind().lowerName.replace('_', ' ');
          throw explain ? new NotSupportedException("EXPLAIN takes a query (SELECT, WITH, VALUES), not " + kind)
              : new UserException("the statement is not a query but " + kind
                  + ": run it as an update (JDBC executeUpdate, Flight SQL CommandStatementUpdate)");
        }
        PlannerWarmUp.decorrelatorSoon(parsed);
        SqlNode validated;
        // before validation, which expands SELECT * (under EXISTS too) into every column; an
        // EXPLAIN reads nothing
        EarlyReads.Names named = early == null || explain ? null : EarlyReads.names(parsed);
        try {
          validated = planner.validate(parsed);
        } catch (ValidationException e) {
          clock.validate += System.nanoTime() - t1;
          // date + integer days: fix the expression the error names and validate again
          DateArithmetic.Fix fix = fixes.size() < DateArithmetic.MAX_FIXES ? DateArithmetic.fixFor(e) : null;
          if (fix == null || fixes.contains(fix)) {
            throw e;
          }
          fixes.add(fix);
          continue;
        }
        long t2 = System.nanoTime();
        clock.validate += t2 - t1;
        if (named != null) {
          early.start(catalog, named);
        }
        RelRoot root = planner.rel(validated);
        clock.convert += System.nanoTime() - t2;
        GpuRel plan = named(optimize(root.project()), ColumnNames.of(validated, root.validatedRowType.getFieldNames()));
        return explain ? explained(plan) : plan;
      } catch (SqlParseException e) {
        throw Statements.parseError(e, sql);
      } catch (ValidationException e) {
        throw new UserException(validationMessage(e), e);
      } catch (AssertionError e) {
        // Calcite signals some of its own limits by failed assertions (a monotonicity check that
        // meets a non-literal, say): an internal error with its message, not an untyped crash
        throw new InternalException("the SQL planner failed: " + e.getMessage(), e);
      }
    }
  }

  /**
   * The result of {@code EXPLAIN}: {@code plan}'s text ({@link #explain}) as rows of one column,
   * {@code plan}, one operator a row, for any client to show as it shows query results.
   */
  private static GpuRel explained(GpuRel plan) {
    RelNode rel = (RelNode) plan;
    return strings(rel.getCluster(), rel.getTraitSet(), List.of("plan"), PlanText.of(plan).lines().map(List::of).toList());
  }

  /** Literal rows of non-null strings under column names {@code names}, for statements that answer with text. */
  private static GpuRel strings(RelOptCluster cluster, org.apache.calcite.plan.RelTraitSet traits, List<String> names,
      List<List<String>> values) {
    org.apache.calcite.rex.RexBuilder rex = cluster.getRexBuilder();
    org.apache.calcite.rel.type.RelDataTypeFactory types = rex.getTypeFactory();
    RelDataType text = types.createTypeWithNullability(types.createSqlType(org.apache.calcite.sql.type.SqlTypeName.VARCHAR), false);
    com.google.common.collect.ImmutableList.Builder<com.google.common.collect.ImmutableList<org.apache.calcite.rex.RexLiteral>> rows =
        com.google.common.collect.ImmutableList.builder();
    for (List<String> row : values) {
      rows.add(row.stream().map(v -> (org.apache.calcite.rex.RexLiteral) rex.makeLiteral(v, text, false))
          .collect(com.google.common.collect.ImmutableList.toImmutableList()));
    }
    return new GpuValues(cluster, types.createStructType(java.util.Collections.nCopies(names.size(), text), names),
        rows.build(), traits);
  }

  /**
   * {@code plan} with the statement's column names: rewrites may drop the projection that named
   * them (a trivial one over VALUES, say), and a result must keep the names the query gave.
   */
  private static GpuRel named(GpuRel plan, List<String> names) {
    if (plan.getRowType().getFieldNames().equals(names) || names.stream().distinct().count() < names.size()) {
      // duplicate names (SELECT a, a) cannot name a Calcite row type; the plan keeps its made-unique ones
      return plan;
    }
    RelNode rel = (RelNode) plan;
    RelDataType type = rel.getCluster().getTypeFactory().createStructType(
        rel.getRowType().getFieldList().stream().map(f -> f.getType()).toList(), names);
    // a projection or an aggregate on top takes the names itself, so EXPLAIN shows no extra operator
    if (plan instanceof GpuProject p) {
      return new GpuProject(p.getCluster(), p.getTraitSet(), p.getInput(), p.getProjects(), type);
    }
    if (plan instanceof GpuAggregate a && a.getGroupType() == org.apache.calcite.rel.core.Aggregate.Group.SIMPLE
        && a.getRowType().getFieldNames().subList(0, a.getGroupCount()).equals(names.subList(0, a.getGroupCount()))) {
      List<org.apache.calcite.rel.core.AggregateCall> calls = new ArrayList<>();
      for (int i = 0; i < a.getAggCallList().size(); i++) {
        calls.add(a.getAggCallList().get(i).rename(names.get(a.getGroupCount() + i)));
      }
      return (GpuRel) a.copy(a.getTraitSet(), a.getInput(), a.getGroupSet(), a.getGroupSets(), calls);
    }
    return new GpuProject(rel.getCluster(), rel.getTraitSet(), rel,
        rel.getCluster().getRexBuilder().identityProjects(rel.getRowType()), type);
  }

  /** Logical rewrites, the support check, then conversion to the GPU convention: shared by SQL and DataFrames. */
  GpuRel optimize(RelNode logical) {
    if (logical.getCluster().getPlanner().getExecutor() == null) {
      logical.getCluster().getPlanner().setExecutor(ConstantFolder.INSTANCE);
    }
    long t0 = System.nanoTime();
    RelNode rewritten = rewrite(GuardedCasts.remove(logical));
    long t1 = System.nanoTime();
    checkSupported(rewritten, Collections.newSetFromMap(new IdentityHashMap<>()));
    GpuRel physical = GpuRules.convert(rewritten);
    // the phases of a statement's plan (DataFrames optimize without one)
    PlanClock clock = planClock.get();
    if (clock != null) {
      clock.rewrite += t1 - t0;
      clock.physical += System.nanoTime() - t1;
    }
    return physical;
  }

  private SchemaPlus schema() {
    SchemaPlus root = Frameworks.createRootSchema(false);
    addTables(root);
    TYPE_ALIASES.forEach((name, type) -> root.add(name,
        (org.apache.calcite.rel.type.RelProtoDataType) f -> f.createSqlType(type)));
    return root;
  }

  /** Type names users bring from PostgreSQL, DuckDB and Spark, as the SQL types they mean. */
  static final Map<String, org.apache.calcite.sql.type.SqlTypeName> TYPE_ALIASES = Map.of(
      "TEXT", org.apache.calcite.sql.type.SqlTypeName.VARCHAR,
      "STRING", org.apache.calcite.sql.type.SqlTypeName.VARCHAR,
      "INT2", org.apache.calcite.sql.type.SqlTypeName.SMALLINT,
      "INT4", org.apache.calcite.sql.type.SqlTypeName.INTEGER,
      "INT8", org.apache.calcite.sql.type.SqlTypeName.BIGINT,
      "LONG", org.apache.calcite.sql.type.SqlTypeName.BIGINT,
      "FLOAT4", org.apache.calcite.sql.type.SqlTypeName.REAL,
      "FLOAT8", org.apache.calcite.sql.type.SqlTypeName.DOUBLE,
      "BOOL", org.apache.calcite.sql.type.SqlTypeName.BOOLEAN);

  private void addTables(SchemaPlus schema) {
    catalog.shapes().forEach((name, t) -> schema.add(name, new CatalogTable(name, t, -1)));
  }

  /**
   * Logical rewrites before physical planning (and before the support check, which must see
   * their result): fold constants, turn WHERE conditions between joined tables into join
   * conditions, push single-side join conditions into the inputs, and push expressions out of
   * join conditions so equi-joins have plain key columns.
   */
  private RelNode rewrite(RelNode logical) {
    // sub-queries become correlates, which the decorrelator turns into joins and aggregates
    RelNode rel = hep(logical, List.of(LogicalRules.FILTER_SUB_QUERY_TO_CORRELATE,
        LogicalRules.PROJECT_SUB_QUERY_TO_CORRELATE, LogicalRules.JOIN_SUB_QUERY_TO_CORRELATE));
    // window functions (RexOver in a projection) become Window operators, one group per window
    rel = hep(rel, List.of(LogicalRules.PROJECT_TO_LOGICAL_PROJECT_AND_WINDOW));
    rel = RelDecorrelator.decorrelateQuery(rel, RelFactories.LOGICAL_BUILDER.create(rel.getCluster(), null));
    // aggregates' FILTER clauses into their arguments, before trimming drops the filter columns
    // no aggregate reads any more
    rel = AggregateFilters.apply(rel);
    // field trimming: each operator keeps only the columns someone above it reads, so scans
    // and joins carry no dead columns
    rel = new org.apache.calcite.sql2rel.RelFieldTrimmer(null, RelFactories.LOGICAL_BUILDER.create(rel.getCluster(), null))
        .trim(rel);
    // (a AND x) OR (a AND y) -> a AND (x OR y), so a join key repeated in every branch becomes a join key
    rel = rel.accept(new org.apache.calcite.rel.RelShuttleImpl() {
      @Override
      public RelNode visit(LogicalFilter filter) {
        RelNode input = filter.getInput().accept(this);
        return filter.copy(filter.getTraitSet(), input,
            RexUtil.pullFactors(filter.getCluster().getRexBuilder(), filter.getCondition()));
      }

      // a decorrelated sub-query's condition lands on a join (TPC-DS q41: without this, its join
      // on i_manufact stayed inside an OR and paired every row with every row)
      @Override
      public RelNode visit(org.apache.calcite.rel.logical.LogicalJoin join) {
        RelNode visited = super.visit(join);
        if (!(visited instanceof org.apache.calcite.rel.logical.LogicalJoin j)) {
          return visited;
        }
        RexNode factored = RexUtil.pullFactors(j.getCluster().getRexBuilder(), j.getCondition());
        return factored.equals(j.getCondition()) ? j
            : j.copy(j.getTraitSet(), factored, j.getLeft(), j.getRight(), j.getJoinType(), j.isSemiJoinDone());
      }
    });
    rel = hep(rel, List.of(LogicalRules.EXPAND_FILTER_DISJUNCTION_GLOBAL));
    rel = hep(rel, List.of(LogicalRules.FILTER_REDUCE_EXPRESSIONS, LogicalRules.PROJECT_REDUCE_EXPRESSIONS,
        FILTER_INTO_PROJECTED_JOIN, LogicalRules.FILTER_INTO_JOIN, LogicalRules.JOIN_CONDITION_PUSH,
        LogicalRules.JOIN_PUSH_EXPRESSIONS, LogicalRules.AGGREGATE_EXPAND_DISTINCT_AGGREGATES_TO_JOIN,
        LogicalRules.PROJECT_MERGE, LogicalRules.PROJECT_REMOVE));
    // join order: each tree of inner joins becomes one MultiJoin, which JoinOrder orders by
    // estimated sizes; Calcite's heuristic orders those with outer joins
    HepPlanner order = new HepPlanner(HepProgram.builder()
        .addMatchOrder(org.apache.calcite.plan.hep.HepMatchOrder.BOTTOM_UP)
        .addRuleInstance(LogicalRules.JOIN_TO_MULTI_JOIN)
        .build());
    order.setExecutor(ConstantFolder.INSTANCE);
    order.setRoot(rel);
    rel = joinOrder.apply(order.findBestExp());
    rel = hep(rel, List.of(LogicalRules.MULTI_JOIN_OPTIMIZE));
    rel = hep(rel, List.of(LogicalRules.FILTER_INTO_JOIN, LogicalRules.JOIN_CONDITION_PUSH, LogicalRules.PROJECT_MERGE,
        LogicalRules.PROJECT_REMOVE));
    // a column that only a pushed-down join condition reads (q13's o_comment) stays in the join's
    // input, where the filter would compact it and the join gather it for nothing; narrowed
    // there, the filter's projection compacts only what the join passes on ({@link GpuProject})
    rel = hep(rel, List.of(LogicalRules.PROJECT_JOIN_NARROW, LogicalRules.PROJECT_MERGE, LogicalRules.PROJECT_REMOVE));
    return ChunkSplit.apply(SemiJoinReduction.apply(rel), catalog);
  }

  /**
   * A filter over a projection of a join moves below the projection, where FILTER_INTO_JOIN takes
   * it into the join and its inputs: column trimming puts a projection between a WHERE and an
   * explicit {@code JOIN ... ON}, which kept {@code a.x > 1} above the join, over every joined
   * pair. Only over joins: above a scan, the projection must stay right on the scan to narrow it
   * ({@link ScanColumns}).
   */
  private static final RelOptRule FILTER_INTO_PROJECTED_JOIN = FilterProjectTransposeRule.Config.DEFAULT
      .withOperandSupplier(b0 -> b0.operand(LogicalFilter.class).oneInput(b1 -> b1.operand(LogicalProject.class)
          .oneInput(b2 -> b2.operand(LogicalJoin.class).anyInputs())))
      .as(FilterProjectTransposeRule.Config.class)
      .toRule();

  /** {@code rel} rewritten by {@code rules} until none applies. */
  static RelNode hep(RelNode rel, List<RelOptRule> rules) {
    HepProgramBuilder b = HepProgram.builder();
    rules.forEach(b::addRuleInstance);
    HepPlanner hep = new HepPlanner(b.build());
    hep.setExecutor(ConstantFolder.INSTANCE);
    hep.setRoot(rel);
    return hep.findBestExp();
  }

  /**
   * Rejects, by name, every logical operator that has no physical operator yet; each node once
   * ({@code seen}): a chunked plan's parts share their subtrees, and a walk of every path visited
   * them again for each (q21 over SF1 files: 125 ms of a cold plan's 780).
   */
  private static void checkSupported(RelNode node, Set<RelNode> seen) {
    if (!seen.add(node)) {
      return;
    }
    boolean known = node instanceof TableScan || node instanceof LogicalFilter || node instanceof LogicalProject
        || node instanceof LogicalSort || node instanceof LogicalAggregate || node instanceof LogicalJoin
        || node instanceof LogicalUnion || node instanceof org.apache.calcite.rel.logical.LogicalValues
        || node instanceof org.apache.calcite.rel.logical.LogicalIntersect
        || node instanceof org.apache.calcite.rel.logical.LogicalMinus
        || node instanceof org.apache.calcite.rel.logical.LogicalWindow;
    if (!known) {
      throw new NotSupportedException(node.getRelTypeName().replace("Logical", "") + " is not supported yet");
    }
    if (node instanceof Aggregate agg && GpuAggregate.unsupported(agg) != null) {
      throw new NotSupportedException(GpuAggregate.unsupported(agg));
    }
    if (node instanceof org.apache.calcite.rel.core.Window w && GpuWindow.unsupported(w) != null) {
      throw new NotSupportedException(GpuWindow.unsupported(w));
    }
    if (node instanceof LogicalJoin join && GpuJoin.unsupported(join) != null) {
      throw new NotSupportedException(GpuJoin.unsupported(join));
    }
    for (RelNode input : node.getInputs()) {
      checkSupported(input, seen);
    }
  }

  @Override
  public synchronized void close() {
    if (jdbcId != null) {
      JDBC_SESSIONS.remove(jdbcId);
    }
    catalog.close();
  }
}
