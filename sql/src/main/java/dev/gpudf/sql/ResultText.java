package dev.gpudf.sql;

import java.time.LocalDate;
import java.util.List;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;

/** Query results as aligned text: a header row, then one line a row, columns split by {@code |}. */
public final class ResultText {
  private ResultText() {}

  public static String format(VectorSchemaRoot r) {
    List<String> names = r.getSchema().getFields().stream().map(Field::getName).toList();
    int[] width = new int[names.size()];
    String[][] cells = new String[r.getRowCount()][names.size()];
    for (int c = 0; c < names.size(); c++) {
      width[c] = names.get(c).length();
      for (int i = 0; i < r.getRowCount(); i++) {
        cells[i][c] = cell(r.getVector(c), i);
        width[c] = Math.max(width[c], cells[i][c].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    line(sb, names.toArray(new String[0]), width);
    for (String[] row : cells) {
      line(sb, row, width);
    }
    return sb.toString();
  }

  private static String cell(FieldVector v, int i) {
    if (v.isNull(i)) {
      return "NULL";
    }
    // Arrow's DATE is a day number; people read dates
    return v instanceof DateDayVector d ? LocalDate.ofEpochDay(d.get(i)).toString() : v.getObject(i).toString();
  }

  private static void line(StringBuilder sb, String[] cells, int[] width) {
    for (int c = 0; c < cells.length; c++) {
      sb.append(c + 1 < cells.length ? String.format("%-" + width[c] + "s | ", cells[c]) : cells[c]);
    }
    sb.append('\n');
  }
}
