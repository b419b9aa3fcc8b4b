// A first gpudf program: run it with `./gpudf examples/DataFrameExample.java [cpu|gpu|auto]`
// after `mvn -B -ntp -q -DskipTests package`.
import static dev.gpudf.sql.Agg.count;
import static dev.gpudf.sql.Agg.sum;
import static dev.gpudf.sql.Col.col;
import static dev.gpudf.sql.Col.lit;

import dev.gpudf.columnar.Table;
import dev.gpudf.columnar.cuda.Gpu;
import dev.gpudf.sql.DataFrame;
import dev.gpudf.sql.GpuSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import org.apache.arrow.memory.RootAllocator;
import org.apache.calcite.rel.core.JoinRelType;

public class DataFrameExample {
  public static void main(String[] args) throws Exception {
    boolean onGpu = GpuSession.usesGpu(args.length > 0 ? args[0] : "auto");
    Path csv = Files.createTempFile("sales", ".csv");
    Files.writeString(csv, """
        city,product,units,price
        Lyon,tea,3,4.50
        Lyon,coffee,5,3.20
        Zürich,tea,2,6.10
        Zürich,coffee,7,4.80
        Oslo,tea,1,5.00
        """);
    try (RootAllocator allocator = new RootAllocator();
        Gpu gpu = onGpu ? Gpu.open(0) : null;
        GpuSession session = onGpu ? GpuSession.gpu(gpu, allocator) : GpuSession.cpu(allocator)) {
      DataFrame sales = session.read().csv(csv);
      DataFrame countries = session.sql(
          "SELECT * FROM (VALUES ('Lyon', 'France'), ('Zürich', 'Switzerland'), ('Oslo', 'Norway')) AS c(town, country)");
      DataFrame revenue = sales
          .withColumn("revenue", col("units").times(col("price")))
          .join(countries, col("city").eq(col("town")), JoinRelType.INNER)
          .groupBy("country")
          .agg(sum(col("revenue")).as("revenue"), count().as("lines"))
          .filter(col("revenue").gt(lit(10)))
          .orderBy(col("revenue").desc());
      System.out.println(revenue.schema());
      revenue.show(10);
      try (Table<?> result = revenue.collect()) {
        System.out.println(result.rowCount() + " rows kept " + (onGpu ? "on the GPU" : "in host memory"));
      }
      // the same session through JDBC, for tools that speak only JDBC
      session.createTable("revenue", revenue);
      try (Connection c = DriverManager.getConnection(session.jdbcUrl());
          ResultSet rs = c.createStatement().executeQuery("SELECT SUM(lines) FROM revenue")) {
        rs.next();
        System.out.println("lines over JDBC: " + rs.getLong(1));
      }
    } finally {
      Files.delete(csv);
    }
  }
}
