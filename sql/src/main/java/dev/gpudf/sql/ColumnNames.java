package dev.gpudf.sql;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.calcite.sql.SqlBasicCall;
import org.apache.calcite.sql.SqlCall;
import org.apache.calcite.sql.SqlFunction;
import org.apache.calcite.sql.SqlIdentifier;
import org.apache.calcite.sql.SqlKind;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlOrderBy;
import org.apache.calcite.sql.SqlSelect;
import org.apache.calcite.sql.SqlAggFunction;

/**
 * Names for result columns the query left unnamed, as PostgreSQL gives them instead of Calcite's
 * {@code EXPR$n}: a function or aggregate call is named after its function ({@code count},
 * {@code avg}, {@code upper}; with FILTER or OVER too), a CAST after what it casts, a scalar
 * sub-query after its column, any other expression {@code ?column?}.
 * A name already taken gets {@code _1}, {@code _2}, ... so that every result column has its own.
 */
final class ColumnNames {
  private ColumnNames() {}

  /** {@code names} (the validated row type's) with each generated {@code EXPR$n} replaced. */
  static List<String> of(SqlNode validated, List<String> names) {
    SqlSelect select = select(validated);
    if (select == null || select.getSelectList().size() != names.size()) {
      return names;
    }
    List<String> out = new ArrayList<>(names.size());
    Set<String> taken = new HashSet<>();
    for (String n : names) {
      if (!generated(n)) {
        taken.add(n.toLowerCase(Locale.ROOT));
      }
    }
    for (int i = 0; i < names.size(); i++) {
      String n = names.get(i);
      if (!generated(n)) {
        out.add(n);
        continue;
      }
      String base = name(expression(select.getSelectList().get(i)));
      String unique = base;
      for (int k = 1; !taken.add(unique.toLowerCase(Locale.ROOT)); k++) {
        unique = base + "_" + k;
      }
      out.add(unique);
    }
    return out;
  }

  private static boolean generated(String name) {
    return name.matches("EXPR\\$\\d+");
  }

  private static SqlSelect select(SqlNode node) {
    if (node instanceof SqlOrderBy o) {
      return select(o.query);
    }
    return node instanceof SqlSelect s ? s : null;
  }

  private static SqlNode expression(SqlNode item) {
    return item.getKind() == SqlKind.AS ? ((SqlCall) item).operand(0) : item;
  }

  private static String name(SqlNode e) {
    if (e instanceof SqlSelect sub && sub.getSelectList().size() == 1) {
      // a scalar sub-query is named after its one column
      return name(expression(sub.getSelectList().get(0)));
    }
    if (e instanceof SqlIdentifier id) {
      return id.names.get(id.names.size() - 1);
    }
    if (e instanceof SqlBasicCall call) {
      // an aggregate's FILTER and OVER clauses, a CAST: named after what they wrap
      if (call.getKind() == SqlKind.CAST || call.getKind() == SqlKind.SCALAR_QUERY || call.getKind() == SqlKind.FILTER
          || call.getKind() == SqlKind.OVER) {
        return name(call.operand(0));
      }
      if (call.getOperator() instanceof SqlFunction || call.getOperator() instanceof SqlAggFunction) {
        return call.getOperator().getName().toLowerCase(Locale.ROOT);
      }
    }
    return "?column?";
  }
}
