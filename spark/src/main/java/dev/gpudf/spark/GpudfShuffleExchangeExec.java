package dev.gpudf.spark;

import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostColumn;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import dev.gpudf.kernels.Expr;
import dev.gpudf.kernels.Gather;
import dev.gpudf.kernels.Slice;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.SinglePartition$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLShuffleWriteMetricsReporter$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's {@code ShuffleExchangeExec} above a gpudf operator, as a columnar shuffle: each map task
 * splits its input's batches by Spark's own partition of each row ({@link SparkPartitionIds}: hash
 * partitioning on columns, or a single partition) and writes each part to Spark's shuffle as an
 * Arrow IPC stream ({@link ArrowShuffleSerializer}); each reduce task reads its partition's parts
 * back as batches of Arrow columns ({@link ShuffledBatchRdd}), which a gpudf operator above takes
 * with no copy. No row is made on either side: Spark's exchange turned every row of gpudf's
 * batches into an {@code UnsafeRow} and back. Spark's shuffle (its files, its fetches, its
 * recovery) is unchanged. A device batch is copied to the host once, to be split there.
 *
 * <p>Taken only without adaptive execution: Spark's adaptive planner reads shuffles through its
 * own exchange type, which this is not; there Spark's exchange stays.
 */
public final class GpudfShuffleExchangeExec extends GpudfExec {
  private final Partitioning partitioning;
  private final SparkPlan child;
  private transient scala.collection.immutable.Map<String, SQLMetric> writeMetrics;
  private transient scala.collection.immutable.Map<String, SQLMetric> readMetrics;
  private transient ShuffleDependency<Object, byte[], byte[]> dependency;

  public GpudfShuffleExchangeExec(Partitioning partitioning, SparkPlan child) {
    this.partitioning = partitioning;
    this.child = child;
  }

  /** {@code x} as a gpudf exchange, or a {@link ExprTranslator.Refused} saying why it stays Spark's. */
  static GpudfShuffleExchangeExec of(ShuffleExchangeExec x) {
    if (org.apache.spark.sql.internal.SQLConf.get().adaptiveExecutionEnabled()) {
      throw new ExprTranslator.Refused("adaptive execution reads shuffles through Spark's exchange");
    }
    if (!(x.child() instanceof GpudfExec)) {
      throw new ExprTranslator.Refused("its input is Spark's rows");
    }
    if (x.child().output().isEmpty()) {
      throw new ExprTranslator.Refused("its input has no columns");
    }
    keys(x.outputPartitioning(), list(x.child().output()));
    return new GpudfShuffleExchangeExec(x.outputPartitioning(), x.child());
  }

  /** The input columns that {@code p} partitions by, in order (none for a single partition); or a {@link ExprTranslator.Refused}. */
  private static int[] keys(Partitioning p, List<Attribute> input) {
    if (p == SinglePartition$.MODULE$) {
      return new int[0];
    }
    if (!(p instanceof HashPartitioning h)) {
      throw new ExprTranslator.Refused("a partitioning of " + p.getClass().getSimpleName());
    }
    List<Expression> exprs = list(h.expressions());
    int[] keys = new int[exprs.size()];
    for (int i = 0; i < keys.length; i++) {
      if (!(ExprTranslator.translate(exprs.get(i), input) instanceof Expr.Col c)) {
        throw new ExprTranslator.Refused("a partitioning key that is not a column: " + exprs.get(i).sql());
      }
      SparkPartitionIds.check(exprs.get(i).dataType());
      keys[i] = c.index();
    }
    return keys;
  }

  public SparkPlan child() {
    return child;
  }

  @Override
  public Partitioning outputPartitioning() {
    return partitioning;
  }

  @Override
  public String nodeName() {
    return "GpudfShuffleExchange";
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    return new ShuffledBatchRdd(dependency(), child.schema(), nodeName(), opMetrics(), readMetrics());
  }

  @Override
  public SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> children) {
    return new GpudfShuffleExchangeExec(partitioning, children.apply(0));
  }

  @Override
  public scala.collection.immutable.Seq<SparkPlan> children() {
    return seq(List.of(child));
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return child.output();
  }

  @Override
  Object[] arguments() {
    return new Object[] {partitioning};
  }

  private synchronized scala.collection.immutable.Map<String, SQLMetric> writeMetrics() {
    if (writeMetrics == null) {
      writeMetrics = SQLShuffleWriteMetricsReporter$.MODULE$.createShuffleWriteMetrics(sparkContext());
    }
    return writeMetrics;
  }

  private synchronized scala.collection.immutable.Map<String, SQLMetric> readMetrics() {
    if (readMetrics == null) {
      readMetrics = org.apache.spark.sql.execution.metric.SQLShuffleReadMetricsReporter.createShuffleReadMetrics(sparkContext());
    }
    return readMetrics;
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    java.util.Map<String, SQLMetric> shuffle = new java.util.LinkedHashMap<>(CollectionConverters.asJava(writeMetrics()));
    shuffle.putAll(CollectionConverters.asJava(readMetrics()));
    return GpudfExec.metricsMap(opMetrics(), shuffle);
  }

  /**
   * The shuffle, made once (a plan run twice reads the same map output), or taken from an exchange
   * of the same query that computes the same rows ({@link ExchangeReuse}).
   */
  private synchronized ShuffleDependency<Object, byte[], byte[]> dependency() {
    if (dependency == null) {
      SparkPlan canonical = canonicalized();
      dependency = ExchangeReuse.find(sparkContext(), canonical);
      if (dependency == null) {
        dependency = newDependency();
        ExchangeReuse.remember(sparkContext(), canonical, dependency);
      }
    }
    return dependency;
  }

  /** A new shuffle: the child's batches split by partition on each map task. */
  private ShuffleDependency<Object, byte[], byte[]> newDependency() {
    int partitions = partitioning.numPartitions();
    List<Attribute> input = list(child.output());
    int[] keys = keys(partitioning, input);
    StructType schema = child.schema();
    String name = nodeName();
    OpMetrics m = opMetrics();
    RDD<Tuple2<Object, byte[]>> parts = child.executeColumnar().toJavaRDD().mapPartitions(batches -> {
      MapSide out = new MapSide(batches, schema, keys, partitions, GpudfExec.taskExec(name), m);
      TaskContext.get().addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) ctx -> out.close());
      return out;
    }).rdd();
    return new ShuffleDependency<>(parts, new ByPartitionId(partitions), new ArrowShuffleSerializer(),
        scala.Option.empty(), scala.Option.empty(), false,
        ShuffleExchangeExec.createShuffleWriteProcessor(writeMetrics()),
        scala.reflect.ClassTag$.MODULE$.apply(Object.class), scala.reflect.ClassTag$.MODULE$.apply(byte[].class),
        scala.reflect.ClassTag$.MODULE$.apply(byte[].class));
  }

  /** Spark's partitioner for records whose key is their partition already. */
  private static final class ByPartitionId extends org.apache.spark.Partitioner {
    private static final long serialVersionUID = 1L;
    private final int partitions;

    ByPartitionId(int partitions) {
      this.partitions = partitions;
    }

    @Override
    public int numPartitions() {
      return partitions;
    }

    @Override
    public int getPartition(Object key) {
      return (Integer) key;
    }
  }

  /**
   * A map task's records: each input batch on the host (a device batch copied down once), checked
   * against the input's types, split by partition (rows gathered in partition order, then one
   * slice a partition), each part as the bytes of an Arrow IPC stream. Closing frees the task's
   * context and checks its allocator for leaks.
   */
  static final class MapSide implements java.util.Iterator<Tuple2<Object, byte[]>>, AutoCloseable {
    private final java.util.Iterator<ColumnarBatch> input;
    private final StructType schema;
    private final int[] keys;
    private final int partitions;
    private final Exec exec;
    private final OpMetrics metrics;
    private final ArrayDeque<Tuple2<Object, byte[]>> ready = new ArrayDeque<>();
    private boolean closed;

    MapSide(java.util.Iterator<ColumnarBatch> input, StructType schema, int[] keys, int partitions, Exec exec,
        OpMetrics metrics) {
      this.input = input;
      this.schema = schema;
      this.keys = keys;
      this.partitions = partitions;
      this.exec = exec;
      this.metrics = metrics;
    }

    @Override
    public boolean hasNext() {
      while (ready.isEmpty() && !closed) {
        if (!input.hasNext()) {
          close();
          return false;
        }
        split(input.next());
      }
      return !ready.isEmpty();
    }

    @Override
    public Tuple2<Object, byte[]> next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      return ready.poll();
    }

    private void split(ColumnarBatch b) {
      long t0 = System.nanoTime();
      HostTable table;
      DeviceTable d = DeviceBatch.taken(b, exec);
      if (d != null) {
        try (d) {
          table = GpudfExec.onHost(exec, d, metrics);
        }
      } else {
        table = SparkArrow.toGpudf(b, schema, exec.allocator());
      }
      metrics.spent(OpMetrics.Phase.TO_SPARK, t0);
      long t1 = System.nanoTime();
      try (table) {
        int rows = table.rowCount();
        if (rows == 0) {
          return;
        }
        checkTypes(table);
        metrics.ranOn();
        int[] ids = keys.length == 0 ? new int[rows] : SparkPartitionIds.of(keyVectors(table), keyTypes(), rows, partitions);
        int[] counts = new int[partitions];
        for (int id : ids) {
          counts[id]++;
        }
        int only = ids[0];
        if (counts[only] == rows) {
          ready.add(new Tuple2<>(only, bytes(table, exec.allocator())));
          return;
        }
        try (HostTable ordered = inPartitionOrder(table, ids, counts)) {
          int start = 0;
          for (int p = 0; p < partitions; p++) {
            if (counts[p] > 0) {
              try (HostTable part = Slice.slice(exec, ordered, start, counts[p])) {
                ready.add(new Tuple2<>(p, bytes(part, exec.allocator())));
              }
              start += counts[p];
            }
          }
        }
      } finally {
        metrics.spent(OpMetrics.Phase.OPERATION, t1);
      }
    }

    /** Each column's Arrow type as Spark's for the input: a part read back must be what the parent expects. */
    private void checkTypes(HostTable table) {
      if (table.columnCount() != schema.fields().length) {
        throw new dev.gpudf.columnar.error.InternalException("an exchange's input batch of " + table.columnCount()
            + " columns, not " + schema.fields().length);
      }
      for (int c = 0; c < table.columnCount(); c++) {
        DataType got = ArrowUtils.fromArrowField(table.column(c).vector().getField());
        if (!got.sameType(schema.fields()[c].dataType())) {
          throw new dev.gpudf.columnar.error.InternalException("an exchange's input column " + schema.fields()[c].name()
              + " is " + got.simpleString() + ", not " + schema.fields()[c].dataType().simpleString());
        }
      }
    }

    private List<FieldVector> keyVectors(HostTable table) {
      List<FieldVector> out = new ArrayList<>();
      for (int k : keys) {
        out.add(table.column(k).vector());
      }
      return out;
    }

    private List<DataType> keyTypes() {
      List<DataType> out = new ArrayList<>();
      for (int k : keys) {
        out.add(schema.fields()[k].dataType());
      }
      return out;
    }

    /** {@code table}'s rows gathered by partition (each partition's rows in their order), which the caller closes. */
    private HostTable inPartitionOrder(HostTable table, int[] ids, int[] counts) {
      int[] next = new int[partitions];
      for (int p = 1; p < partitions; p++) {
        next[p] = next[p - 1] + counts[p - 1];
      }
      IntVector map = new IntVector("map", exec.allocator());
      try {
        map.allocateNew(ids.length);
        for (int r = 0; r < ids.length; r++) {
          map.set(next[ids[r]]++, r);
        }
        map.setValueCount(ids.length);
      } catch (RuntimeException e) {
        map.close();
        throw e;
      }
      try (HostColumn m = new HostColumn(map)) {
        return Gather.gather(exec, table, m);
      }
    }

    /** {@code table}'s rows as one Arrow IPC stream. */
    static byte[] bytes(HostTable table, BufferAllocator allocator) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (VectorSchemaRoot root = table.toArrow(allocator);
          ArrowStreamWriter w = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
        w.start();
        w.writeBatch();
        w.end();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return out.toByteArray();
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        ready.clear();
        try (BufferAllocator a = exec.allocator(); Exec e = exec) {
          // the context, then the allocator, which checks for leaks
        }
      }
    }
  }
}
