package dev.gpudf.spark;

import dev.gpudf.columnar.ArrowTypes;
import dev.gpudf.columnar.DeviceTable;
import dev.gpudf.columnar.HostTable;
import dev.gpudf.kernels.Exec;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A gpudf operator's result on the device, handed to Spark as a columnar batch with no copy: a
 * gpudf operator that reads it takes the device table itself ({@link #taken}); anything else that
 * reads its values (Spark's own operators, its shuffle) brings the whole table to the host once, at
 * the first read, on the producing task's stream. The table's kernels have finished when the batch
 * is made, so a reader on another stream sees it whole. Its producer closes it, when the next
 * batch is asked for or the task ends (Spark's contract for columnar batches); a gpudf operator
 * that took the table holds its own reference.
 */
final class DeviceBatch implements GpudfExec.HeldBatch {
  private final DeviceTable table;
  private final Exec exec;
  private final OpMetrics metrics;
  private final ColumnarBatch batch;
  private SparkArrow.Output host;

  /**
   * {@code table} (now this batch's, closed with it) made by the task of {@code exec}, whose work on
   * it has finished, for the operator of {@code metrics}.
   */
  DeviceBatch(DeviceTable table, Exec exec, OpMetrics metrics) {
    this.table = table;
    this.exec = exec;
    this.metrics = metrics;
    ColumnVector[] columns = new ColumnVector[table.columnCount()];
    for (int i = 0; i < columns.length; i++) {
      DataType type = ArrowUtils.fromArrowField(ArrowTypes.toArrowField("c" + i, table.types().get(i)));
      columns[i] = new Column(this, i, type);
    }
    this.batch = new ColumnarBatch(columns, table.rowCount());
  }

  @Override
  public ColumnarBatch batch() {
    return batch;
  }

  /**
   * The device table under {@code batch}, retained for the caller, when {@code batch} is a device
   * batch on {@code exec}'s GPU; null otherwise.
   */
  static DeviceTable taken(ColumnarBatch batch, Exec exec) {
    if (batch.numCols() == 0 || !(batch.column(0) instanceof Column c) || !exec.hasGpu()
        || c.owner.table.gpu() != exec.gpu()) {
      return null;
    }
    c.owner.table.retain();
    return c.owner.table;
  }

  /** Column {@code i} on the host, the whole table copied there at the first call. */
  private ColumnVector host(int i) {
    if (host == null) {
      long t0 = System.nanoTime();
      try (HostTable h = GpudfExec.onHost(exec, table, metrics)) {
        host = SparkArrow.toSpark(h, exec.allocator());
      }
      metrics.spent(OpMetrics.Phase.TO_SPARK, t0);
    }
    return host.batch().column(i);
  }

  @Override
  public void close() {
    try (DeviceTable t = table) {
      if (host != null) {
        host.close();
        host = null;
      }
    }
  }

  /** One column of a device batch: its values read from the host copy. */
  private static final class Column extends ColumnVector {
    private final DeviceBatch owner;
    private final int index;

    Column(DeviceBatch owner, int index, DataType type) {
      super(type);
      this.owner = owner;
      this.index = index;
    }

    private ColumnVector host() {
      return owner.host(index);
    }

    /** Nothing: the batch's producer closes the table under it. */
    @Override
    public void close() {}

    @Override
    public boolean hasNull() {
      return host().hasNull();
    }

    @Override
    public int numNulls() {
      return host().numNulls();
    }

    @Override
    public boolean isNullAt(int rowId) {
      return host().isNullAt(rowId);
    }

    @Override
    public boolean getBoolean(int rowId) {
      return host().getBoolean(rowId);
    }

    @Override
    public byte getByte(int rowId) {
      return host().getByte(rowId);
    }

    @Override
    public short getShort(int rowId) {
      return host().getShort(rowId);
    }

    @Override
    public int getInt(int rowId) {
      return host().getInt(rowId);
    }

    @Override
    public long getLong(int rowId) {
      return host().getLong(rowId);
    }

    @Override
    public float getFloat(int rowId) {
      return host().getFloat(rowId);
    }

    @Override
    public double getDouble(int rowId) {
      return host().getDouble(rowId);
    }

    @Override
    public ColumnarArray getArray(int rowId) {
      return host().getArray(rowId);
    }

    @Override
    public ColumnarMap getMap(int ordinal) {
      return host().getMap(ordinal);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      return host().getDecimal(rowId, precision, scale);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      return host().getUTF8String(rowId);
    }

    @Override
    public byte[] getBinary(int rowId) {
      return host().getBinary(rowId);
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return host().getChild(ordinal);
    }
  }
}
