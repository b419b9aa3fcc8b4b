package dev.gpudf.sql;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import org.apache.calcite.rel.RelNode;

/**
 * A value per (plan node, column), null ones included, each computed once: plans share subtrees
 * (a chunk branch's whole input), and a walk of every path would take time exponential in their
 * depth. One walk's state: made, used and dropped by one caller.
 */
final class ColumnMemo<T> {
  private final Map<RelNode, Map<Integer, Optional<T>>> values = new IdentityHashMap<>();

  /** The value of {@code node}'s {@code column}, from {@code compute} the first time it is asked for. */
  T get(RelNode node, int column, BiFunction<RelNode, Integer, T> compute) {
    // not computeIfAbsent: compute asks for other nodes' values, adding to these maps
    Map<Integer, Optional<T>> columns = values.computeIfAbsent(node, n -> new HashMap<>());
    Optional<T> v = columns.get(column);
    if (v == null) {
      v = Optional.ofNullable(compute.apply(node, column));
      columns.put(column, v);
    }
    return v.orElse(null);
  }
}
