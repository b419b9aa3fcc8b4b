package dev.gpudf.sql;

import dev.gpudf.columnar.error.UserException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What a table's declaration promises about its rows: NOT NULL columns, unique keys (a PRIMARY
 * KEY, which is also NOT NULL, a UNIQUE constraint or a UNIQUE index; rows whose key holds a NULL
 * never collide), and the most characters of each {@code VARCHAR(n)} or {@code CHAR(n)} column
 * (a longer value is an error, as in PostgreSQL, not stored whole or cut). Every statement that
 * changes the rows checks them all first, so a failed INSERT leaves the table as it was.
 */
record TableConstraints(Set<String> notNull, List<Key> keys, Map<String, Integer> maxChars) {
  /** A unique key: its columns, and what declared it (for the error message). */
  record Key(List<String> columns, String what) {}

  static final TableConstraints NONE = new TableConstraints(Set.of(), List.of(), Map.of());

  TableConstraints {
    notNull = Set.copyOf(notNull);
    keys = List.copyOf(keys);
    maxChars = Map.copyOf(maxChars);
  }

  TableConstraints withKey(Key key) {
    List<Key> more = new ArrayList<>(keys);
    more.add(key);
    return new TableConstraints(notNull, more, maxChars);
  }

  TableConstraints withoutKey(String what) {
    return new TableConstraints(notNull, keys.stream().filter(k -> !k.what().equals(what)).toList(), maxChars);
  }

  /** Throws {@link UserException} naming the first broken promise of {@code rows}, which would become table {@code table}. */
  void check(String table, VectorSchemaRoot rows) {
    for (String c : notNull) {
      FieldVector v = rows.getVector(c);
      if (v.getNullCount() > 0) {
        throw new UserException("column '" + c + "' of table '" + table + "' may not be NULL");
      }
    }
    for (Map.Entry<String, Integer> c : maxChars.entrySet()) {
      FieldVector v = rows.getVector(c.getKey());
      for (int i = 0; i < rows.getRowCount(); i++) {
        Object o = v.isNull(i) ? null : v.getObject(i);
        if (o != null) {
          String s = o.toString();
          int chars = s.codePointCount(0, s.length());
          if (chars > c.getValue()) {
            throw new UserException("value too long for column '" + c.getKey() + "' of table '" + table + "', declared "
                + "with at most " + c.getValue() + " characters: " + chars + " in row " + (i + 1));
          }
        }
      }
    }
    for (Key k : keys) {
      List<FieldVector> cols = k.columns().stream().map(rows::getVector).toList();
      Set<List<Object>> seen = new HashSet<>();
      for (int i = 0; i < rows.getRowCount(); i++) {
        List<Object> key = new ArrayList<>(cols.size());
        boolean hasNull = false;
        for (FieldVector v : cols) {
          Object o = v.getObject(i);
          hasNull |= o == null;
          // Text (Arrow's strings) compares by content; decimals by value, whatever their scale
          key.add(o instanceof java.math.BigDecimal d ? d.stripTrailingZeros() : o == null ? null : o instanceof
              org.apache.arrow.vector.util.Text t ? t.toString() : o);
        }
        if (!hasNull && !seen.add(key)) {
          throw new UserException("duplicate key " + key + " in table '" + table + "' violates its " + k.what());
        }
      }
    }
  }
}
