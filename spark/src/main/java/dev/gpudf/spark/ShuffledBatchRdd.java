package dev.gpudf.spark;

import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.Partition;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLShuffleReadMetricsReporter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;
import scala.Product2;

/**
 * The reduce side of a {@link GpudfShuffleExchangeExec}: partition {@code i} reads partition
 * {@code i} of the shuffle from every map task through Spark's shuffle reader, each part an Arrow
 * IPC stream ({@link ArrowShuffleSerializer}) decoded into Arrow columns of the task's allocator and
 * handed on as a batch, valid until the next is asked for (Spark's contract); the last is freed when
 * the partition ends or the task completes, then the task's allocator, which checks for leaks. A
 * part whose columns are not the exchange's is an error naming both counts, never a batch.
 */
final class ShuffledBatchRdd extends RDD<ColumnarBatch> {
  private static final long serialVersionUID = 1L;
  private final ShuffleDependency<Object, byte[], byte[]> dependency;
  private final StructType schema;
  private final String name;
  private final OpMetrics metrics;
  private final scala.collection.immutable.Map<String, SQLMetric> readMetrics;

  ShuffledBatchRdd(ShuffleDependency<Object, byte[], byte[]> dependency, StructType schema, String name, OpMetrics metrics,
      scala.collection.immutable.Map<String, SQLMetric> readMetrics) {
    super(dependency.rdd().context(), GpudfExec.seq(List.of(dependency)),
        scala.reflect.ClassTag$.MODULE$.apply(ColumnarBatch.class));
    this.dependency = dependency;
    this.schema = schema;
    this.name = name;
    this.metrics = metrics;
    this.readMetrics = readMetrics;
  }

  @Override
  public Partition[] getPartitions() {
    Partition[] out = new Partition[dependency.partitioner().numPartitions()];
    for (int i = 0; i < out.length; i++) {
      out[i] = new Part(i);
    }
    return out;
  }

  @Override
  public scala.collection.Iterator<ColumnarBatch> compute(Partition split, TaskContext context) {
    int p = split.index();
    SQLShuffleReadMetricsReporter reporter = new SQLShuffleReadMetricsReporter(
        context.taskMetrics().createTempShuffleReadMetrics(), readMetrics);
    scala.collection.Iterator<Product2<Object, byte[]>> records = SparkEnv.get().shuffleManager()
        .<Object, byte[]>getReader(dependency.shuffleHandle(), 0, Integer.MAX_VALUE, p, p + 1, context, reporter).read();
    Batches out = new Batches(records, schema.fields().length, GpudfExec.taskExec(name), metrics);
    context.addTaskCompletionListener((TaskCompletionListener) ctx -> out.close());
    return scala.jdk.javaapi.CollectionConverters.asScala(out);
  }

  /** One reduce partition of the shuffle. */
  private record Part(int index) implements Partition {
    // what Partition's equals calls as its super's (Scala's trait bridge, not seen by javac)
    public boolean org$apache$spark$Partition$$super$equals(Object other) {
      return equals(other);
    }
  }

  /** A reduce task's batches, one a part read. */
  private static final class Batches extends GpudfExec.TaskBatches {
    private final scala.collection.Iterator<Product2<Object, byte[]>> records;
    private final int columns;
    private final Exec exec;
    private final OpMetrics metrics;

    Batches(scala.collection.Iterator<Product2<Object, byte[]>> records, int columns, Exec exec, OpMetrics metrics) {
      this.records = records;
      this.columns = columns;
      this.exec = exec;
      this.metrics = metrics;
    }

    @Override
    boolean more() {
      return records.hasNext();
    }

    @Override
    GpudfExec.HeldBatch make() {
      byte[] bytes = records.next()._2();
      long t0 = System.nanoTime();
      try (HostTable t = decode(bytes, exec.allocator())) {
        if (t.columnCount() != columns) {
          throw new dev.gpudf.columnar.error.InternalException("a shuffled batch of " + t.columnCount()
              + " columns where the exchange has " + columns);
        }
        return SparkArrow.toSpark(t, exec.allocator());
      } finally {
        metrics.spent(OpMetrics.Phase.FROM_SPARK, t0);
      }
    }

    /** The one batch of the Arrow IPC stream {@code bytes}, in {@code allocator}; the caller closes it. */
    static HostTable decode(byte[] bytes, BufferAllocator allocator) {
      try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(bytes), allocator)) {
        if (!r.loadNextBatch()) {
          throw new dev.gpudf.columnar.error.InternalException("a shuffled part of " + bytes.length + " bytes holds no batch");
        }
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        return HostTable.fromArrow(root);
      } catch (IOException e) {
        throw new UncheckedIOException("reading a shuffled part of " + bytes.length + " bytes", e);
      }
    }

    @Override
    void closeTask() {
      try (BufferAllocator a = exec.allocator(); Exec e = exec) {
        // the context, then the allocator, which checks for leaks
      }
    }
  }
}
