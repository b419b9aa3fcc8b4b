package dev.gpudf.sql;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.apache.calcite.sql.SqlBasicCall;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlNodeList;
import org.apache.calcite.sql.SqlOperator;

/**
 * Bounds on what one statement may ask of the planner, so no client can exhaust a server's stack,
 * CPU or memory with SQL text: the text's length, the number of parse-tree nodes, and the nesting
 * depth of its expressions. Chains of AND, OR and {@code ||} (associative in SQL's three-valued
 * logic and for strings) are first rebalanced into trees of logarithmic depth, so a filter of
 * thousands of ORs that a tool generates still runs; other deep nesting ({@code 1+1+...+1}, where
 * the order of evaluation decides overflow and rounding) is refused with its depth. Each limit is
 * a system property: {@code gpudf.limits.statementChars} (default 1 MiB of characters), {@code
 * gpudf.limits.statementTokens} (50,000), {@code gpudf.limits.statementNodes} (200,000) and
 * {@code gpudf.limits.expressionDepth} (200).
 */
public final class StatementLimits {
  /** Longest statement, in characters. */
  public static final int MAX_CHARS = Integer.getInteger("gpudf.limits.statementChars", 1 << 20);
  /** Most tokens (words, numbers, strings, operators) in one statement: the parser's work grows with their square in a long chain of operators. */
  public static final int MAX_TOKENS = Integer.getInteger("gpudf.limits.statementTokens", 50_000);
  /** Most parse-tree nodes in one statement. */
  public static final int MAX_NODES = Integer.getInteger("gpudf.limits.statementNodes", 200_000);
  /** Deepest nesting of expressions and sub-queries, after chains of AND/OR/|| are rebalanced. */
  public static final int MAX_DEPTH = Integer.getInteger("gpudf.limits.expressionDepth", 200);

  private StatementLimits() {}

  /**
   * A {@link UserException} when {@code sql} is empty, longer than {@link #MAX_CHARS} or has more than
   * {@link #MAX_TOKENS} tokens, found before the parser sees it: Calcite's parser takes time
   * quadratic in the length of a chain of operators (40,000 additions: 2.7 s on this project's CI
   * host), which the token count bounds.
   */
  public static void checkText(String sql) {
    if (sql.replace(";", "").isBlank()) {
      throw new UserException("the statement is empty");
    }
    if (sql.length() > MAX_CHARS) {
      throw new UserException("the statement is " + sql.length() + " characters long; at most " + MAX_CHARS
          + " are allowed (gpudf.limits.statementChars)");
    }
    int tokens = 0;
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
        continue;
      }
      if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? n : end + 1;
        continue;
      }
      if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
        continue;
      }
      if (c == '\'' || c == '"') {
        // a quoted string or name, its doubled quotes inside
        i++;
        while (i < n && (sql.charAt(i) != c || i + 1 < n && sql.charAt(i + 1) == c)) {
          i += sql.charAt(i) == c ? 2 : 1;
        }
        i++;
      } else if (Character.isLetterOrDigit(c) || c == '_' || c == '$') {
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$'
            || sql.charAt(i) == '.')) {
          i++;
        }
      } else {
        i++;
      }
      if (++tokens > MAX_TOKENS) {
        throw new UserException("the statement has more than " + MAX_TOKENS + " tokens; split it, or send long lists"
            + " of values as bound parameters or a bulk ingest (gpudf.limits.statementTokens)");
      }
    }
  }

  /**
   * Rebalances the chains of associative operators in {@code parsed} (in place) and checks its size
   * and depth; returns it. Iterative, so a tree of any depth is measured without recursion.
   */
  public static SqlNode check(SqlNode parsed) {
    Deque<SqlNode> nodes = new ArrayDeque<>();
    Deque<Integer> depths = new ArrayDeque<>();
    nodes.push(parsed);
    depths.push(1);
    long count = 0;
    // the calls a rebalance made are balanced already: visiting them does not rebalance them again
    java.util.Set<SqlNode> balancedCalls = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    while (!nodes.isEmpty()) {
      SqlNode node = nodes.pop();
      int depth = depths.pop();
      if (++count > MAX_NODES) {
        throw new UserException("the statement has more than " + MAX_NODES + " parts (names, literals, operators);"
            + " split it, or bind a long list as parameters (gpudf.limits.statementNodes)");
      }
      if (depth > MAX_DEPTH) {
        throw new UserException("the statement nests expressions more than " + MAX_DEPTH + " deep near line "
            + node.getParserPosition().getLineNum() + ", column " + node.getParserPosition().getColumnNum()
            + " (gpudf.limits.expressionDepth)");
      }
      List<SqlNode> children;
      if (node instanceof SqlNodeList list) {
        children = list.getList();
      } else if (node instanceof SqlCall call) {
        if (associative(call) && !balancedCalls.contains(call)) {
          rebalance((SqlBasicCall) call, balancedCalls);
        }
        children = call.getOperandList();
      } else {
        continue;
      }
      for (SqlNode child : children) {
        if (child != null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    }
    return parsed;
  }

  private static boolean associative(SqlCall call) {
    SqlKind kind = call.getKind();
    return call instanceof SqlBasicCall && call.operandCount() == 2
        && (kind == SqlKind.AND || kind == SqlKind.OR || call.getOperator().getName().equals("||"));
  }

  /** Makes the chain of {@code root}'s operator under it a balanced tree of the same operands in the same order. */
  private static void rebalance(SqlBasicCall root, java.util.Set<SqlNode> made) {
    SqlOperator op = root.getOperator();
    List<SqlNode> operands = new ArrayList<>();
    Deque<SqlNode> pending = new ArrayDeque<>();
    pending.push(root);
    while (!pending.isEmpty()) {
      SqlNode n = pending.pop();
      if (n instanceof SqlBasicCall c && c.getOperator() == op && c.operandCount() == 2) {
        pending.push(c.operand(1));
        pending.push(c.operand(0));
      } else {
        operands.add(n);
      }
    }
    if (operands.size() <= 2) {
      return;
    }
    int half = operands.size() / 2;
    root.setOperand(0, balanced(op, operands, 0, half, made));
    root.setOperand(1, balanced(op, operands, half, operands.size(), made));
  }

  private static SqlNode balanced(SqlOperator op, List<SqlNode> operands, int from, int to, java.util.Set<SqlNode> made) {
    if (to - from == 1) {
      return operands.get(from);
    }
    int mid = (from + to) >>> 1;
    SqlNode call = op.createCall(operands.get(from).getParserPosition(), balanced(op, operands, from, mid, made),
        balanced(op, operands, mid, to, made));
    made.add(call);
    return call;
  }
}
