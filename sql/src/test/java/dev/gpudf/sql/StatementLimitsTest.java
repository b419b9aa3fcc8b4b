package dev.gpudf.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gpudf.columnar.error.UserException;
import java.time.Duration;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Statements built to exhaust the planner (issue 24's denial-of-service attacks) are refused fast
 * with a message naming the limit, and the long chains of AND/OR/|| that tools generate run with
 * the answers their unbalanced forms have.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatementLimitsTest {
  private RootAllocator allocator;
  private GpuSession session;

  @BeforeAll
  void open() {
    allocator = new RootAllocator();
    session = GpuSession.cpu(allocator);
    session.update("CREATE TABLE t (x INTEGER, s VARCHAR)");
    session.update("INSERT INTO t VALUES (1, 'a'), (2, NULL), (NULL, 'c'), (5, 'd'), (3000, 'e'), (-1, 'f')");
  }

  @AfterAll
  void close() {
    session.close();
    allocator.close();
  }

  private String one(String sql) {
    try (VectorSchemaRoot r = session.query(sql)) {
      Object v = r.getVector(0).getObject(0);
      return v == null ? "NULL" : v.toString();
    }
  }

  private UserException refusedWithin(int seconds, String sql) {
    return assertTimeoutPreemptively(Duration.ofSeconds(seconds), () -> assertThrows(UserException.class, () -> session.query(sql)));
  }

  @Test
  void longOrAndAndChainsRunAndAgreeWithInLists() {
    String in = IntStream.range(0, 3000).mapToObj(Integer::toString).collect(Collectors.joining(", "));
    String ors = IntStream.range(0, 3000).mapToObj(i -> "x = " + i).collect(Collectors.joining(" OR "));
    assertEquals(one("SELECT COUNT(*) FROM t WHERE x IN (" + in + ")"), one("SELECT COUNT(*) FROM t WHERE " + ors));
    assertEquals("3", one("SELECT COUNT(*) FROM t WHERE " + ors));
    // NULLs keep three-valued logic through the rebalanced tree: NOT (NULL OR FALSE ...) is NULL, not TRUE
    assertEquals("2", one("SELECT COUNT(*) FROM t WHERE NOT (" + ors + ")"));
    String ands = IntStream.range(0, 1000).mapToObj(i -> "x <> " + (i + 10)).collect(Collectors.joining(" AND "));
    assertEquals("5", one("SELECT COUNT(*) FROM t WHERE " + ands));
    assertEquals("1", one("SELECT COUNT(*) FROM t WHERE x IS NULL OR " + ands.replace("x <>", "x ="))
        , "x IS NULL, then 1000 false terms");
  }

  @Test
  void longConcatenationsKeepTheirOrderAndNulls() {
    String parts = IntStream.range(0, 500).mapToObj(i -> "'" + (char) ('a' + i % 26) + "'").collect(Collectors.joining(" || "));
    String expected = IntStream.range(0, 500).mapToObj(i -> String.valueOf((char) ('a' + i % 26))).collect(Collectors.joining());
    assertEquals(expected, one("SELECT " + parts));
    assertEquals("NULL", one("SELECT " + parts.replace("'q'", "CAST(NULL AS VARCHAR)")));
  }

  @Test
  void deepArithmeticIsRefusedWithItsDepth() {
    UserException e = refusedWithin(10, "SELECT " + "1+".repeat(2000) + "1");
    assertTrue(e.getMessage().contains("more than " + StatementLimits.MAX_DEPTH + " deep"), e.getMessage());
    assertEquals("151", one("SELECT " + "1+".repeat(150) + "1"));
    UserException parens = refusedWithin(10, "SELECT " + "(".repeat(5000) + "1" + ")".repeat(5000));
    assertTrue(parens.getMessage().contains("deep"), parens.getMessage());
  }

  @Test
  void hugeStatementsAreRefusedBeforeParsing() {
    UserException tokens = refusedWithin(2, "SELECT " + "1+".repeat(40_000) + "1");
    assertTrue(tokens.getMessage().contains("more than " + StatementLimits.MAX_TOKENS + " tokens"), tokens.getMessage());
    UserException chars = refusedWithin(2, "SELECT '" + "x".repeat(StatementLimits.MAX_CHARS) + "'");
    assertTrue(chars.getMessage().contains("characters long"), chars.getMessage());
    // a long string literal is one token: it is not refused
    assertEquals("100000", one("SELECT CHAR_LENGTH('" + "y".repeat(100_000) + "')"));
    assertEquals("24", one("SELECT CHAR_LENGTH('it''s -- not /* a comment')"));
  }

  @Test
  void aFailedParseOfALongWordIsFast() {
    // a regular expression once took quadratic time on every statement that failed to parse
    UserException e = assertTimeoutPreemptively(Duration.ofSeconds(3),
        () -> assertThrows(UserException.class, () -> session.update("x".repeat(40_000))));
    assertTrue(e.getMessage().startsWith("Length of identifier 'xxx"), e.getMessage());
    assertTrue(e.getMessage().length() < 2100, "messages that quote input are bounded: " + e.getMessage().length());
  }
}
