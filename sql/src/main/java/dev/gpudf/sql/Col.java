package dev.gpudf.sql;

import dev.gpudf.columnar.error.UserException;
import java.util.List;
import java.util.function.Function;
import org.apache.calcite.rex.RexNode;
import org.apache.calcite.sql.SqlOperator;
import org.apache.calcite.sql.fun.SqlStdOperatorTable;
import org.apache.calcite.tools.RelBuilder;
import org.apache.calcite.util.DateString;

/**
 * A column expression of the {@link DataFrame} API, resolved against the frame it is used in.
 * <pre>{@code
 * df.filter(col("l_shipdate").le(date("1998-09-02")))
 *   .select(col("l_extendedprice").times(lit(1).minus(col("l_discount"))).as("price"))
 * }</pre>
 */
public final class Col {
  private final Function<RelBuilder, RexNode> build;
  private final String alias;
  private final boolean descending;

  private Col(Function<RelBuilder, RexNode> build, String alias, boolean descending) {
    this.build = build;
    this.alias = alias;
    this.descending = descending;
  }

  /**
   * The column {@code name}; an unknown name fails at the frame call that uses it, listing the
   * columns. In a join condition it names a column of either side.
   */
  public static Col col(String name) {
    return new Col(b -> b.size() >= 2 ? joinField(b, name) : field(b, 1, 0, name), name, false);
  }

  private static RexNode field(RelBuilder b, int inputs, int input, String name) {
    List<String> names = b.peek(inputs, input).getRowType().getFieldNames();
    if (!names.contains(name)) {
      throw new UserException("no column '" + name + "' (columns: " + names + ")");
    }
    return b.field(inputs, input, name);
  }

  private static RexNode joinField(RelBuilder b, String name) {
    List<String> left = b.peek(2, 0).getRowType().getFieldNames();
    List<String> right = b.peek(2, 1).getRowType().getFieldNames();
    if (left.contains(name) && right.contains(name)) {
      throw new UserException("column '" + name + "' is on both sides of the join; rename one side's with withColumnRenamed");
    }
    if (!left.contains(name) && !right.contains(name)) {
      throw new UserException("no column '" + name + "' on either side of the join (left: " + left + ", right: " + right + ")");
    }
    return b.field(2, left.contains(name) ? 0 : 1, name);
  }

  /** A constant: Integer, Long, Double, BigDecimal, Boolean or String. */
  public static Col lit(Object value) {
    return new Col(b -> b.literal(value), null, false);
  }

  /** A DATE constant from {@code yyyy-mm-dd}. */
  public static Col date(String isoDate) {
    return new Col(b -> b.getRexBuilder().makeDateLiteral(new DateString(isoDate)), null, false);
  }

  RexNode rex(RelBuilder b) {
    RexNode r = build.apply(b);
    return alias == null ? r : b.alias(r, alias);
  }

  RexNode bare(RelBuilder b) {
    return build.apply(b);
  }

  boolean descending() {
    return descending;
  }

  private Col call(SqlOperator op, Col... more) {
    return new Col(b -> {
      RexNode[] args = new RexNode[more.length + 1];
      args[0] = build.apply(b);
      for (int i = 0; i < more.length; i++) {
        args[i + 1] = more[i].build.apply(b);
      }
      return b.call(op, args);
    }, null, false);
  }

  /** A column built by {@code build}, named {@code alias} (null: unnamed). */
  static Col of(Function<RelBuilder, RexNode> build, String alias) {
    return new Col(build, alias, false);
  }

  public Col as(String name) {
    return new Col(build, name, descending);
  }

  /** This column as a descending sort key. */
  public Col desc() {
    return new Col(build, alias, true);
  }

  public Col plus(Col o) {
    return call(SqlStdOperatorTable.PLUS, o);
  }

  public Col minus(Col o) {
    return call(SqlStdOperatorTable.MINUS, o);
  }

  public Col times(Col o) {
    return call(SqlStdOperatorTable.MULTIPLY, o);
  }

  public Col div(Col o) {
    return call(SqlStdOperatorTable.DIVIDE, o);
  }

  public Col eq(Col o) {
    return call(SqlStdOperatorTable.EQUALS, o);
  }

  public Col ne(Col o) {
    return call(SqlStdOperatorTable.NOT_EQUALS, o);
  }

  public Col lt(Col o) {
    return call(SqlStdOperatorTable.LESS_THAN, o);
  }

  public Col le(Col o) {
    return call(SqlStdOperatorTable.LESS_THAN_OR_EQUAL, o);
  }

  public Col gt(Col o) {
    return call(SqlStdOperatorTable.GREATER_THAN, o);
  }

  public Col ge(Col o) {
    return call(SqlStdOperatorTable.GREATER_THAN_OR_EQUAL, o);
  }

  public Col and(Col o) {
    return call(SqlStdOperatorTable.AND, o);
  }

  public Col or(Col o) {
    return call(SqlStdOperatorTable.OR, o);
  }

  public Col not() {
    return call(SqlStdOperatorTable.NOT);
  }

  public Col isNull() {
    return call(SqlStdOperatorTable.IS_NULL);
  }

  public Col like(String pattern) {
    return call(SqlStdOperatorTable.LIKE, lit(pattern));
  }

  public Col isNotNull() {
    return call(SqlStdOperatorTable.IS_NOT_NULL);
  }

  /** SUBSTRING(this FROM start FOR length), 1-based characters. */
  public Col substring(int start, int length) {
    return call(SqlStdOperatorTable.SUBSTRING, lit(start), lit(length));
  }

  /** EXTRACT(YEAR FROM this) of a DATE or TIMESTAMP. */
  public Col year() {
    return new Col(b -> b.call(SqlStdOperatorTable.EXTRACT,
        b.getRexBuilder().makeFlag(org.apache.calcite.avatica.util.TimeUnitRange.YEAR), build.apply(b)), null, false);
  }

  /** CAST(this AS type). */
  public Col cast(dev.gpudf.columnar.DataType type) {
    return new Col(b -> b.cast(build.apply(b), SqlTypes.toCalcite(b.getTypeFactory(), type).getSqlTypeName(),
        type.id() == dev.gpudf.columnar.TypeId.DECIMAL ? type.precision() : -1,
        type.id() == dev.gpudf.columnar.TypeId.DECIMAL ? type.scale() : -1), null, false);
  }

  /** CASE WHEN condition THEN value ..., finished by {@link When#otherwise}. */
  public static When when(Col condition, Col value) {
    return new When(List.of(condition, value));
  }

  /** A CASE expression being built. */
  public static final class When {
    private final List<Col> parts;

    private When(List<Col> parts) {
      this.parts = parts;
    }

    public When when(Col condition, Col value) {
      List<Col> more = new java.util.ArrayList<>(parts);
      more.add(condition);
      more.add(value);
      return new When(more);
    }

    public Col otherwise(Col value) {
      return new Col(b -> {
        List<RexNode> args = new java.util.ArrayList<>();
        parts.forEach(p -> args.add(p.build.apply(b)));
        args.add(value.build.apply(b));
        return b.call(SqlStdOperatorTable.CASE, args);
      }, null, false);
    }
  }
}
