package dev.gpudf.spark;

import dev.gpudf.columnar.DataType;
import dev.gpudf.kernels.ParquetDecode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.datasources.FileScanRDD;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Spark's scan of Parquet files ({@code FileSourceScanExec}) on gpudf: the same splits Spark planned
 * (files, byte ranges, where they are), each read by {@link ParquetSplitReader}: the columns the
 * query needs (and a partitioned table's partition columns, each split's values), as stored pages straight from the file, decoded on the device (by the decoder's CPU
 * twin on the CPU backend) into batches the next gpudf operator takes where they are. Spark's own
 * reader still reads what gpudf's does not take (a split of a file stored otherwise), so an answer
 * never depends on which reader read a split. Spark's pushed-down filters skip the row groups
 * whose statistics prove no row passes them ({@link RowGroupSkipping}); the filter above the scan
 * applies them to the rows.
 *
 * <p>Its metrics: tables are the batches decoded; bytes to the device the pages' stored bytes;
 * the from-Spark time is reading the pages from the file, the operation time decoding them.
 */
public final class GpudfParquetScanExec extends GpudfExec {
  /** Spark SQL configuration: Parquet scans on gpudf ({@code true}, the default) or left to Spark. */
  static final String ENABLED = "spark.gpudf.parquetScan.enabled";

  private final FileSourceScanExec scan;

  public GpudfParquetScanExec(FileSourceScanExec scan) {
    this.scan = scan;
  }

  /**
   * Over Spark's scan's canonical form (its columns by position, its filters normalized): two scans
   * of the same files, columns and filters compare equal, so that what is computed above them can
   * be shared (Spark's reuse of exchanges, {@link ExchangeReuse}); the scan itself is not a child,
   * so Spark would not canonicalize it.
   */
  @Override
  public org.apache.spark.sql.execution.SparkPlan doCanonicalize() {
    return new GpudfParquetScanExec((FileSourceScanExec) scan.canonicalized());
  }

  /**
   * {@code scan} on gpudf, or a {@link ExprTranslator.Refused} saying why not: it reads another
   * format, no columns (Spark counts rows from the footers), metadata columns, partition columns of
   * a type gpudf does not take, buckets, columns of a type gpudf's Parquet decoder does
   * not give, files Spark's reader would not give as batches, or files not on the local file
   * system.
   */
  static GpudfParquetScanExec of(FileSourceScanExec scan) {
    if (!Boolean.parseBoolean(SQLConf.get().getConfString(ENABLED, "true"))) {
      throw new ExprTranslator.Refused(ENABLED + " is false");
    }
    HadoopFsRelation relation = scan.relation();
    if (!(relation.fileFormat() instanceof ParquetFileFormat)) {
      throw new ExprTranslator.Refused("it reads " + relation.fileFormat() + " files, not Parquet");
    }
    for (StructField f : relation.partitionSchema().fields()) {
      try {
        ExprTranslator.type(f.dataType());
      } catch (ExprTranslator.Refused e) {
        throw new ExprTranslator.Refused("its partition column " + f.name() + ": " + e.getMessage());
      }
    }
    if (scan.fileConstantMetadataColumns().nonEmpty()
        || scan.output().size() != scan.requiredSchema().size() + relation.partitionSchema().size()) {
      throw new ExprTranslator.Refused("it reads file metadata columns");
    }
    if (scan.bucketedScan()) {
      throw new ExprTranslator.Refused("it reads buckets");
    }
    if (!scan.supportsColumnar()) {
      // Spark's reader, which reads the splits gpudf's does not take, would give rows
      throw new ExprTranslator.Refused("Spark's Parquet reader would not read its columns as batches");
    }
    if (scan.requiredSchema().isEmpty()) {
      throw new ExprTranslator.Refused("it reads no columns (a count of rows)");
    }
    checkTypes(scan);
    for (org.apache.hadoop.fs.Path root : GpudfUnaryExec.list(relation.location().rootPaths())) {
      String scheme = root.toUri().getScheme();
      if (scheme != null && !scheme.equals("file")) {
        throw new ExprTranslator.Refused("its files are on " + scheme + ", not the local file system");
      }
    }
    return new GpudfParquetScanExec(scan);
  }

  /** A {@link ExprTranslator.Refused} unless gpudf's decoder gives every column {@code scan} reads. */
  private static void checkTypes(FileSourceScanExec scan) {
    for (StructField f : scan.requiredSchema().fields()) {
      DataType t = ExprTranslator.type(f.dataType());
      if (!ParquetDecode.decodes(t, 4) && !ParquetDecode.decodes(t, 8) && !ParquetDecode.decodes(t, ParquetDecode.BYTE_ARRAY)) {
        throw new ExprTranslator.Refused("its column " + f.name() + " is of type " + f.dataType().simpleString()
            + ", which gpudf's Parquet decoder does not give");
      }
    }
  }

  private static List<String> names(FileSourceScanExec scan) {
    List<String> out = new ArrayList<>();
    for (StructField f : scan.requiredSchema().fields()) {
      out.add(f.name());
    }
    return out;
  }

  public FileSourceScanExec scan() {
    return scan;
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return scan.output();
  }

  @Override
  public scala.collection.immutable.Seq<org.apache.spark.sql.execution.SparkPlan> children() {
    return seq(List.of());
  }

  @Override
  public org.apache.spark.sql.execution.SparkPlan withNewChildrenInternal(
      scala.collection.immutable.IndexedSeq<org.apache.spark.sql.execution.SparkPlan> children) {
    return this;
  }

  @Override
  public String nodeName() {
    return "GpudfParquetScan";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " " + scan.simpleString(maxFields);
  }

  @Override
  Object[] arguments() {
    return new Object[] {scan};
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    // Spark's scan made to run (nothing is read until a task runs): the scalar subqueries its
    // pushed-down filters hold are done when it returns, as its input needs them
    scan.executeColumnar();
    // Spark's own input: its splits, and its reader for the splits gpudf's does not take
    FileScanRDD spark = (FileScanRDD) scan.inputRDD();
    // dates as stored in files that do not say Spark 3+ wrote them, as Spark reads them in this mode
    boolean datesAsWritten = "CORRECTED".equalsIgnoreCase(SQLConf.get().getConf(SQLConf.PARQUET_REBASE_MODE_IN_READ()));
    ParquetSplitReader read = new ParquetSplitReader(
        spark.org$apache$spark$sql$execution$datasources$FileScanRDD$$readFunction, scan.requiredSchema(),
        scan.relation().partitionSchema(), nodeName(),
        batchRows(), datesAsWritten, new RowGroupSkipping(list(scan.pushedDownFilters()), names(scan)), opMetrics());
    RDD<InternalRow> rows = new FileScanRDD(scan.relation().sparkSession(), read, spark.filePartitions(), spark.readSchema(),
        spark.metadataColumns(), spark.org$apache$spark$sql$execution$datasources$FileScanRDD$$metadataExtractors,
        new org.apache.spark.sql.catalyst.FileSourceOptions(scan.relation().options()));
    // as Spark's own columnar scan: the rows are batches (an erasure Spark's file readers rely on)
    @SuppressWarnings({"unchecked", "rawtypes"})
    RDD<ColumnarBatch> batches = (RDD) rows;
    return batches;
  }
}
