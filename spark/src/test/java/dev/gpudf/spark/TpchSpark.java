package dev.gpudf.spark;

import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-H's tables as Parquet that Spark writes (DBGEN's rows from {@code io.trino.tpch}, money as
 * DECIMAL(15,2), dates as DATE), generated part by part in Spark's tasks so that large scales
 * write in parallel; and the views the queries read.
 */
final class TpchSpark {
  private TpchSpark() {}

  /** Writes each TPC-H table missing under {@code data} as Parquet, generated part by part in Spark's tasks; how many it wrote. */
  static int write(SparkSession spark, Path data, double sf, int cores) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    int written = 0;
    for (TpchTable<?> t : TpchTable.getTables()) {
      Path dir = data.resolve(t.getTableName());
      if (Files.exists(dir.resolve("_SUCCESS"))) {
        continue;
      }
      String name = t.getTableName();
      // nation and region are fixed tables of one part
      int parts = name.equals("nation") || name.equals("region") ? 1 : Math.max(1, (int) Math.min(cores * 4L, Math.ceil(sf * 8)));
      List<Integer> ids = new ArrayList<>();
      for (int p = 1; p <= parts; p++) {
        ids.add(p);
      }
      JavaRDD<Row> rows = sc.parallelize(ids, parts).flatMap(p -> rows(TpchTable.getTable(name), sf, p, parts));
      spark.createDataFrame(rows, schema(t)).write().mode("overwrite").parquet(dir.toString());
      written++;
    }
    return written;
  }

  private static <E extends TpchEntity> StructType schema(TpchTable<E> table) {
    List<StructField> fields = new ArrayList<>();
    for (TpchColumn<E> c : table.getColumns()) {
      DataType d = switch (c.getType().getBase()) {
        case IDENTIFIER -> DataTypes.LongType;
        case INTEGER -> DataTypes.IntegerType;
        case DATE -> DataTypes.DateType;
        case DOUBLE -> DataTypes.createDecimalType(15, 2);
        case VARCHAR -> DataTypes.StringType;
      };
      fields.add(new StructField(c.getColumnName(), d, true, Metadata.empty()));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  /** Part {@code part} of {@code parts} of {@code table}'s rows, as Spark rows of {@link #schema}. */
  private static <E extends TpchEntity> Iterator<Row> rows(TpchTable<E> table, double sf, int part, int parts) {
    List<TpchColumn<E>> columns = table.getColumns();
    Iterator<E> it = table.createGenerator(sf, part, parts).iterator();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public Row next() {
        E r = it.next();
        Object[] values = new Object[columns.size()];
        for (int k = 0; k < values.length; k++) {
          TpchColumn<E> c = columns.get(k);
          values[k] = switch (c.getType().getBase()) {
            case IDENTIFIER -> c.getIdentifier(r);
            case INTEGER -> c.getInteger(r);
            case DATE -> java.sql.Date.valueOf(java.time.LocalDate.ofEpochDay(c.getDate(r)));
            case DOUBLE -> BigDecimal.valueOf(Math.round(c.getDouble(r) * 100), 2);
            case VARCHAR -> c.getString(r);
          };
        }
        return RowFactory.create(values);
      }
    };
  }

  /** A test's {@link LocalSpark} on {@code backend} over SF{@code sf} written under {@code dir}, its views made. */
  static SparkSession local(String app, String backend, Path dir, double sf) {
    return over(LocalSpark.start(app, backend), dir, sf, 2);
  }

  /** {@code spark} with SF{@code sf} written under {@code dir} by {@code cores} tasks at once, its views made. */
  static SparkSession over(SparkSession spark, Path dir, double sf, int cores) {
    write(spark, dir, sf, cores);
    views(spark, dir);
    return spark;
  }

  /** A temporary view of each table under {@code data}, named as the queries name it. */
  static void views(SparkSession spark, Path data) {
    for (TpchTable<?> t : TpchTable.getTables()) {
      spark.read().parquet(data.resolve(t.getTableName()).toString()).createOrReplaceTempView(t.getTableName());
    }
  }
}
