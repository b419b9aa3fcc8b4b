package dev.gpudf.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.gpudf.bench.DuckDbTables;
import dev.gpudf.sql.TpchAnswers;
import dev.gpudf.sql.TpchTables;
import io.trino.tpch.TpchTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The Docker image (docker/Dockerfile, tag from {@code -Dgpudf.image}, default {@code gpudf:local})
 * through Testcontainers: TPC-H SF0.01 ingested over Flight SQL, the 22 queries through the
 * Flight SQL JDBC driver equal to DuckDB's answers; then a new container over the same data
 * directory finds the tables again. Skipped, saying why, where no Docker daemon answers or the
 * image was not built ({@code .ci/run} builds it).
 */
@Testcontainers(disabledWithoutDocker = true)
class DockerImageTest {
  private static final String IMAGE = System.getProperty("gpudf.image", "gpudf:local");
  private static final double SCALE = 0.01;

  @BeforeAll
  static void imageIsBuilt() {
    boolean present;
    try {
      DockerClientFactory.instance().client().inspectImageCmd(IMAGE).exec();
      present = true;
    } catch (RuntimeException e) {
      present = false;
    }
    Assumptions.assumeTrue(present, "image " + IMAGE + " is not built (docker/build-base.sh, then docker build -f "
        + "docker/Dockerfile --build-arg BASE=gpudf-base:local -t " + IMAGE + " . after mvn package)");
  }

  private static GenericContainer<?> server(Path data) {
    return new GenericContainer<>(DockerImageName.parse(IMAGE))
        .withCommand("serve", "--host", "0.0.0.0", "--port", "31337", "--path", "/data", "--backend", "cpu", "--insecure")
        .withExposedPorts(31337)
        .withFileSystemBind(data.toString(), "/data", BindMode.READ_WRITE)
        .waitingFor(Wait.forHealthcheck().withStartupTimeout(Duration.ofMinutes(3)));
  }

  private static String url(GenericContainer<?> c) {
    return "jdbc:arrow-flight-sql://" + c.getHost() + ":" + c.getMappedPort(31337) + "/?useEncryption=false";
  }

  @Test
  void tpchThroughTheContainerAndBackAfterARestart(@TempDir Path data) throws Exception {
    // the server runs as an unprivileged user that must write the tables there
    Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxrwxrwx"));
    Map<String, Long> counts = new LinkedHashMap<>();
    try (BufferAllocator allocator = new RootAllocator();
        DuckDBConnection duck = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
        GenericContainer<?> first = server(data)) {
      first.start();
      try (FlightClient fc = FlightClient.builder(allocator, Location.forGrpcInsecure(first.getHost(),
          first.getMappedPort(31337))).build(); FlightSqlClient client = new FlightSqlClient(fc)) {
        TableDefinitionOptions create = TableDefinitionOptions.newBuilder()
            .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
            .setIfExists(TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_FAIL).build();
        for (TpchTable<?> t : TpchTable.getTables()) {
          try (VectorSchemaRoot rows = TpchTables.arrow(allocator, t, SCALE)) {
            assertEquals(rows.getRowCount(), client.executeIngest(rows,
                new FlightSqlClient.ExecuteIngestOptions(t.getTableName(), create, null, null, Map.of())));
            DuckDbTables.load(duck, allocator, t.getTableName(), rows);
            counts.put(t.getTableName(), (long) rows.getRowCount());
          }
        }
      }
      List<String> differ = new ArrayList<>();
      try (Connection c = DriverManager.getConnection(url(first)); Statement s = c.createStatement();
          Statement d = duck.createStatement()) {
        for (Map.Entry<String, String> q : TpchTables.queries().entrySet()) {
          List<Object[]> got;
          try (ResultSet rs = s.executeQuery(q.getValue())) {
            got = TpchAnswers.rows(rs);
          }
          try (ResultSet rs = d.executeQuery(q.getValue())) {
            String diff = TpchAnswers.difference(TpchAnswers.rows(rs), got);
            if (diff != null) {
              differ.add(q.getKey() + ": " + diff);
            }
          }
        }
      }
      assertEquals(List.of(), differ, "TPC-H answers of the container that differ from DuckDB's");
    }
    // a new container over the same directory loads what the first one wrote
    try (GenericContainer<?> second = server(data)) {
      second.start();
      try (Connection c = DriverManager.getConnection(url(second)); Statement s = c.createStatement()) {
        for (Map.Entry<String, Long> t : counts.entrySet()) {
          try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + t.getKey())) {
            rs.next();
            assertEquals(t.getValue(), rs.getLong(1), t.getKey() + " after the restart");
          }
        }
        try (ResultSet rs = s.executeQuery(TpchTables.queries().get("q6"))) {
          rs.next();
          assertNotNull(rs.getObject(1), "q6's revenue after the restart");
        }
      }
    }
  }
}
