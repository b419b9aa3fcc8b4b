package dev.gpudf.sql;

import dev.gpudf.columnar.error.InternalException;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.calcite.plan.Convention;
import org.apache.calcite.plan.RelOptRule;
import org.apache.calcite.rel.RelNode;
import org.apache.calcite.rel.convert.ConverterRule;
import org.apache.calcite.rel.core.Aggregate;
import org.apache.calcite.rel.core.Filter;
import org.apache.calcite.rel.core.Join;
import org.apache.calcite.rel.core.Project;
import org.apache.calcite.rel.core.Sort;
import org.apache.calcite.rel.core.SetOp;
import org.apache.calcite.rel.core.Union;
import org.apache.calcite.rel.core.Values;
import org.apache.calcite.rel.logical.LogicalAggregate;
import org.apache.calcite.rel.logical.LogicalFilter;
import org.apache.calcite.rel.logical.LogicalJoin;
import org.apache.calcite.rel.logical.LogicalProject;
import org.apache.calcite.rel.logical.LogicalSort;
import org.apache.calcite.rel.logical.LogicalTableScan;
import org.apache.calcite.rel.logical.LogicalIntersect;
import org.apache.calcite.rel.logical.LogicalMinus;
import org.apache.calcite.rel.logical.LogicalUnion;
import org.apache.calcite.rel.logical.LogicalValues;

/** The rules that turn logical operators into gpudf's physical ones ({@link GpuRel#CONVENTION}). */
public final class GpuRules {
  private GpuRules() {}

  /** Every conversion rule. */
  public static final List<RelOptRule> ALL = List.of(
      rule(LogicalTableScan.class, "GpuTableScanRule", r -> new GpuTableScan(r.getCluster(),
          r.getTraitSet().replace(GpuRel.CONVENTION), ((LogicalTableScan) r).getHints(), r.getTable())),
      rule(LogicalFilter.class, "GpuFilterRule", r -> {
        Filter f = (Filter) r;
        return new GpuFilter(f.getCluster(), f.getTraitSet().replace(GpuRel.CONVENTION), gpu(f.getInput()), f.getCondition());
      }),
      rule(LogicalProject.class, "GpuProjectRule", r -> {
        Project p = (Project) r;
        return new GpuProject(p.getCluster(), p.getTraitSet().replace(GpuRel.CONVENTION), gpu(p.getInput()), p.getProjects(),
            p.getRowType());
      }),
      rule(LogicalSort.class, "GpuSortRule", r -> {
        Sort s = (Sort) r;
        return new GpuSort(s.getCluster(), s.getTraitSet().replace(GpuRel.CONVENTION), gpu(s.getInput()), s.getCollation(),
            s.offset, s.fetch);
      }),
      rule(LogicalJoin.class, "GpuJoinRule", r -> {
        Join j = (Join) r;
        return new GpuJoin(j.getCluster(), j.getTraitSet().replace(GpuRel.CONVENTION), gpu(j.getLeft()), gpu(j.getRight()),
            j.getCondition(), j.getJoinType());
      }),
      rule(LogicalUnion.class, "GpuUnionRule", r -> {
        Union u = (Union) r;
        return new GpuUnion(u.getCluster(), u.getTraitSet().replace(GpuRel.CONVENTION),
            u.getInputs().stream().map(GpuRules::gpu).toList(), u.all);
      }),
      rule(LogicalIntersect.class, "GpuIntersectRule", r -> {
        SetOp o = (SetOp) r;
        return new GpuIntersect(o.getCluster(), o.getTraitSet().replace(GpuRel.CONVENTION),
            o.getInputs().stream().map(GpuRules::gpu).toList(), o.all);
      }),
      rule(LogicalMinus.class, "GpuMinusRule", r -> {
        SetOp o = (SetOp) r;
        return new GpuMinus(o.getCluster(), o.getTraitSet().replace(GpuRel.CONVENTION),
            o.getInputs().stream().map(GpuRules::gpu).toList(), o.all);
      }),
      rule(LogicalValues.class, "GpuValuesRule", r -> {
        Values v = (Values) r;
        return new GpuValues(v.getCluster(), v.getRowType(), v.getTuples(), v.getTraitSet().replace(GpuRel.CONVENTION));
      }),
      rule(org.apache.calcite.rel.logical.LogicalWindow.class, "GpuWindowRule", r -> {
        org.apache.calcite.rel.core.Window w = (org.apache.calcite.rel.core.Window) r;
        return new GpuWindow(w.getCluster(), w.getTraitSet().replace(GpuRel.CONVENTION), gpu(w.getInput()), w.constants,
            w.getRowType(), w.groups);
      }),
      rule(LogicalAggregate.class, "GpuAggregateRule", r -> {
        Aggregate a = (Aggregate) r;
        return new GpuAggregate(a.getCluster(), a.getTraitSet().replace(GpuRel.CONVENTION), gpu(a.getInput()), a.getGroupSet(),
            a.getGroupSets(), a.getAggCallList());
      }));

  private static final Map<Class<?>, ConverterRule> BY_TYPE = ALL.stream().map(r -> (ConverterRule) r)
      .collect(Collectors.toUnmodifiableMap(r -> r.getOperand().getMatchedClass(), r -> r));

  /**
   * {@code logical} converted bottom-up, each operator by its rule. Every rule converts one
   * logical operator into one physical operator, so a cost-based search (Volcano) has nothing to
   * choose and only spent planning time: 19 of TPC-H q21's 59 ms over 8 chunks. Structurally
   * equal subtrees become one operator, as in Volcano, so that a query runs them once.
   */
  static GpuRel convert(RelNode logical) {
    Map<RelNode, RelNode> converted = new IdentityHashMap<>();
    Map<String, RelNode> byDigest = new HashMap<>();
    return (GpuRel) convert(logical, converted, byDigest);
  }

  private static RelNode convert(RelNode rel, Map<RelNode, RelNode> converted, Map<String, RelNode> byDigest) {
    RelNode done = converted.get(rel);
    if (done != null) {
      return done;
    }
    List<RelNode> inputs = rel.getInputs().stream().map(i -> convert(i, converted, byDigest)).toList();
    ConverterRule rule = BY_TYPE.get(rel.getClass());
    if (rule == null) {
      throw new InternalException("no physical operator for " + rel.getRelTypeName());
    }
    RelNode gpu = rule.convert(rel.copy(rel.getTraitSet(), inputs));
    RelNode shared = byDigest.putIfAbsent(gpu.getDigest(), gpu);
    RelNode result = shared != null ? shared : gpu;
    converted.put(rel, result);
    return result;
  }

  private static RelNode gpu(RelNode input) {
    return ConverterRule.convert(input, input.getTraitSet().replace(GpuRel.CONVENTION));
  }

  private static RelOptRule rule(Class<? extends RelNode> type, String name, java.util.function.Function<RelNode, RelNode> convert) {
    return ConverterRule.Config.INSTANCE
        .withConversion(type, Convention.NONE, GpuRel.CONVENTION, name)
        .withRuleFactory(c -> new ConverterRule(c) {
          @Override
          public RelNode convert(RelNode rel) {
            return convert.apply(rel);
          }
        })
        .toRule();
  }
}
