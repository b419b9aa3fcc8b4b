package dev.gpudf.sql;

import java.util.List;
import org.apache.calcite.adapter.java.JavaTypeFactory;
import org.apache.calcite.config.CalciteConnectionConfig;
import org.apache.calcite.config.CalciteSystemProperty;
import org.apache.calcite.jdbc.CalciteSchema;
import org.apache.calcite.jdbc.JavaTypeFactoryImpl;
import org.apache.calcite.plan.ConventionTraitDef;
import org.apache.calcite.plan.RelOptCluster;
import org.apache.calcite.plan.volcano.VolcanoPlanner;
import org.apache.calcite.prepare.CalciteCatalogReader;
import org.apache.calcite.prepare.CalciteSqlValidator;
import org.apache.calcite.rel.RelCollationTraitDef;
import org.apache.calcite.rel.RelRoot;
import org.apache.calcite.rex.RexBuilder;
import org.apache.calcite.schema.SchemaPlus;
import org.apache.calcite.sql.SqlNode;
import org.apache.calcite.sql.SqlOperatorTable;
import org.apache.calcite.sql.parser.SqlParseException;
import org.apache.calcite.sql.parser.SqlParser;
import org.apache.calcite.sql.util.SqlOperatorTables;
import org.apache.calcite.sql.validate.SqlValidator;
import org.apache.calcite.sql2rel.RelDecorrelator;
import org.apache.calcite.sql2rel.SqlToRelConverter;
import org.apache.calcite.sql2rel.StandardConvertletTable;
import org.apache.calcite.tools.ValidationException;

/**
 * One statement from text to a logical plan: parsed, validated against the session's tables and
 * converted, as Calcite's {@code Frameworks.getPlanner} does it, without what gpudf's planning
 * does not use. That planner registered Calcite's whole rule set (a hundred rules, their classes
 * initialised: 60 ms of a first plan on 2 cores) in a cost-based planner that gpudf's rewrites
 * and conversion never run, and gave the plan's cluster Calcite's default metadata, which
 * compiles code on first use ({@link MetadataHandlers} says what that cost). One object a
 * statement: {@link #validate} keeps the validator that {@link #rel} converts with.
 */
final class SqlFrontEnd {
  private static final SqlToRelConverter.Config CONVERTER = SqlToRelConverter.config().withTrimUnusedFields(false);

  private final SchemaPlus root;
  private final CalciteConnectionConfig connection;
  private final SqlParser.Config parser;
  private final SqlOperatorTable operators;
  private final JavaTypeFactory types;
  private final VolcanoPlanner planner;
  private SqlValidator validator;

  /**
   * A front end over the tables of {@code root}, names resolved as {@code connection} says
   * (case, conformance), statements read by {@code parser}, functions from {@code operators},
   * types by {@code typeSystem}.
   */
  SqlFrontEnd(SchemaPlus root, CalciteConnectionConfig connection, SqlParser.Config parser, SqlOperatorTable operators,
      org.apache.calcite.rel.type.RelDataTypeSystem typeSystem) {
    this.root = root;
    this.connection = connection;
    this.parser = parser;
    this.operators = operators;
    this.types = new JavaTypeFactoryImpl(typeSystem);
    // the cluster's planner only holds its traits (the rewrites run in Hep planners of their own)
    // and the executor that folds constants
    this.planner = new VolcanoPlanner(null, org.apache.calcite.plan.Contexts.of(connection));
    planner.setExecutor(ConstantFolder.INSTANCE);
    planner.addRelTraitDef(ConventionTraitDef.INSTANCE);
    if (CalciteSystemProperty.ENABLE_COLLATION_TRAIT.value()) {
      planner.addRelTraitDef(RelCollationTraitDef.INSTANCE);
    }
  }

  /** {@code sql} parsed (one statement). */
  SqlNode parse(String sql) throws SqlParseException {
    return SqlParser.create(sql, parser).parseStmt();
  }

  /** {@code parsed} validated; a failure is a {@link ValidationException} whose cause names the problem and its position. */
  SqlNode validate(SqlNode parsed) throws ValidationException {
    CalciteCatalogReader reader = catalogReader();
    validator = new CalciteSqlValidator(SqlOperatorTables.chain(operators, reader), reader, types,
        SqlValidator.Config.DEFAULT
            .withDefaultNullCollation(connection.defaultNullCollation())
            .withLenientOperatorLookup(connection.lenientOperatorLookup())
            .withConformance(connection.conformance())
            .withIdentifierExpansion(true));
    try {
      return validator.validate(parsed.accept(new ApproxValues()));
    } catch (RuntimeException e) {
      throw new ValidationException(e);
    }
  }

  /**
   * VALUES whose column mixes exact numbers ({@code 1}, {@code 1.5}) with approximate ones
   * ({@code 1e300}): the column is DOUBLE, but Calcite keeps each literal as written, a BigDecimal
   * beside a Double, and its metadata compares them (the rows' collation, pulled-up predicates):
   * planning failed with a ClassCastException. The exact ones are written as approximate, the
   * value the DOUBLE column holds.
   */
  private static final class ApproxValues extends org.apache.calcite.sql.util.SqlShuttle {
    @Override
    public SqlNode visit(org.apache.calcite.sql.SqlCall call) {
      SqlNode visited = super.visit(call);
      if (!(visited instanceof org.apache.calcite.sql.SqlCall values) || values.getKind() != org.apache.calcite.sql.SqlKind.VALUES) {
        return visited;
      }
      java.util.Set<Integer> approximate = new java.util.HashSet<>();
      for (SqlNode row : values.getOperandList()) {
        if (row instanceof org.apache.calcite.sql.SqlCall r && r.getKind() == org.apache.calcite.sql.SqlKind.ROW) {
          for (int i = 0; i < r.operandCount(); i++) {
            if (r.operand(i) instanceof org.apache.calcite.sql.SqlNumericLiteral n && !n.isExact()) {
              approximate.add(i);
            }
          }
        }
      }
      for (SqlNode row : values.getOperandList()) {
        if (row instanceof org.apache.calcite.sql.SqlCall r && r.getKind() == org.apache.calcite.sql.SqlKind.ROW) {
          for (int i : approximate) {
            if (i < r.operandCount() && r.operand(i) instanceof org.apache.calcite.sql.SqlNumericLiteral n && n.isExact()) {
              r.setOperand(i, org.apache.calcite.sql.SqlLiteral.createApproxNumeric(
                  n.getValueAs(java.math.BigDecimal.class).toString() + "E0", n.getParserPosition()));
            }
          }
        }
      }
      return values;
    }
  }

  /** A cluster of this front end's planner and types, for a plan of its own. */
  RelOptCluster cluster() {
    RelOptCluster cluster = RelOptCluster.create(planner, new RexBuilder(types));
    cluster.setMetadataQuerySupplier(MetadataHandlers::query);
    return cluster;
  }

  /** The logical plan of {@code validated}, the statement {@link #validate} returned, sub-queries decorrelated. */
  RelRoot rel(SqlNode validated) {
    if (validator == null) {
      throw new IllegalStateException("rel() before validate()");
    }
    RelOptCluster cluster = cluster();
    SqlToRelConverter converter = new SqlToRelConverter(null, validator, catalogReader(), cluster,
        StandardConvertletTable.INSTANCE, CONVERTER);
    RelRoot root = converter.convertQuery(validated, false, true);
    root = root.withRel(converter.flattenTypes(root.rel, true));
    return root.withRel(RelDecorrelator.decorrelateQuery(root.rel, CONVERTER.getRelBuilderFactory().create(cluster, null)));
  }

  private CalciteCatalogReader catalogReader() {
    return new CalciteCatalogReader(CalciteSchema.from(root), List.of(), types, connection);
  }
}
