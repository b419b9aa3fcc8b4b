package dev.gpudf.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sqllogictest runner itself, then the SQLite corpus through {@code jdbc:gpudf:} on the CPU backend. */
class SqlLogicTestTest {
  @Test
  void runnerTellsPassingFromFailingRecords() throws Exception {
    String script = """
        hash-threshold 4

        statement ok
        CREATE TABLE t1(a INTEGER, b INTEGER)

        statement ok
        INSERT INTO t1(b, a) VALUES(2, 1), (4, 3), (NULL, 5)

        statement error
        INSERT INTO nowhere VALUES(1)

        statement error
        SELECT 1

        query II rowsort
        SELECT a, b FROM t1
        ----
        1
        2
        3
        4
        5
        NULL

        query I nosort
        SELECT a FROM t1 ORDER BY a DESC
        ----
        5
        3
        2

        query R valuesort
        SELECT a * 1.5e0 FROM t1
        ----
        3 values hashing to 533a3bba08f27dafb899cbbb4924ae91

        onlyif mysql
        query I nosort
        SELECT nothing FROM anywhere
        ----
        1

        query I nosort
        SELECT nothing FROM t1
        ----
        1
        """; // the hash is md5sum of "1.500\n4.500\n7.500\n", computed outside Java
    try (Connection c = DriverManager.getConnection("jdbc:gpudf:backend=cpu")) {
      SqlLogicTest.Outcome o = SqlLogicTest.run(c, new StringReader(script));
      // 'statement error' on SELECT 1 fails: the statement succeeds
      assertEquals(3, o.statementsOk(), o.firstProblems().toString());
      assertEquals(1, o.statementsFailed(), o.firstProblems().toString());
      assertEquals(2, o.queriesPassed(), o.firstProblems().toString());
      assertEquals(1, o.queriesFailed(), o.firstProblems().toString());
      assertEquals(1, o.queriesErrored(), o.firstProblems().toString());
    }
  }

  /** The project's own files ({@code src/test/resources/slt/*.test}): every record passes. */
  @Test
  void projectFilesPassCompletely() throws Exception {
    projectFilesPass("cpu");
  }

  /** The project's own files on the GPU backend. */
  @dev.gpudf.columnar.testing.RequiresGpu
  @Test
  void projectFilesPassCompletelyOnTheGpu() throws Exception {
    projectFilesPass("gpu");
  }

  private void projectFilesPass(String backend) throws Exception {
    java.nio.file.Path dir = java.nio.file.Path.of(getClass().getResource("/slt").toURI());
    List<java.nio.file.Path> files;
    try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.list(dir)) {
      files = s.filter(f -> f.toString().endsWith(".test")).sorted().toList();
    }
    assertTrue(!files.isEmpty(), "no .test files in " + dir);
    for (java.nio.file.Path f : files) {
      try (Connection c = DriverManager.getConnection("jdbc:gpudf:backend=" + backend);
          java.io.Reader r = java.nio.file.Files.newBufferedReader(f)) {
        SqlLogicTest.Outcome o = SqlLogicTest.run(c, r);
        System.out.println(backend + " " + o.summary(f.getFileName().toString()));
        assertEquals(0, o.statementsFailed() + o.queriesFailed() + o.queriesErrored(), backend + " " + f + ": " + o.firstProblems());
        assertTrue(o.queriesPassed() > 0, f + " has no queries");
      }
    }
  }

  /** The SQLite corpus's {@code test/select1.test} to {@code select5.test}: every record passes. */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"test/select1.test", "test/select2.test", "test/select3.test",
      "test/select4.test", "test/select5.test"})
  void selectFilesPassCompletely(String file) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:gpudf:backend=cpu")) {
      SqlLogicTest.Outcome o = SqlLogicTest.run(c, SqlLogicTest.corpus(file));
      System.out.println(o.summary(file));
      assertTrue(o.queries() > 700, "the file has hundreds of queries: " + o.summary(file));
      assertEquals(0, o.statementsFailed() + o.queriesFailed() + o.queriesErrored(), o.firstProblems().toString());
    }
  }

  /**
   * The files named by {@code -Dgpudf.slt.files} (comma-separated corpus paths, such as
   * {@code test/random/expr/slt_good_0.test}), each summarised, on {@code -Dgpudf.slt.backend}
   * (cpu by default); skipped when the property is unset.
   */
  @Test
  void filesNamedOnTheCommandLine() throws Exception {
    String files = System.getProperty("gpudf.slt.files");
    org.junit.jupiter.api.Assumptions.assumeTrue(files != null, "set -Dgpudf.slt.files to run corpus files");
    int wrong = 0;
    String backend = System.getProperty("gpudf.slt.backend", "cpu");
    for (String f : files.split(",")) {
      try (Connection c = DriverManager.getConnection("jdbc:gpudf:backend=" + backend)) {
        SqlLogicTest.Outcome o = SqlLogicTest.run(c, SqlLogicTest.corpus(f.strip()));
        System.out.println(o.summary(f.strip()));
        o.firstProblems().stream().limit(3).forEach(p -> System.out.println("  " + p));
        wrong += o.queriesFailed();
      }
    }
    assertEquals(0, wrong, "queries with wrong answers (see the summaries above)");
  }
}
