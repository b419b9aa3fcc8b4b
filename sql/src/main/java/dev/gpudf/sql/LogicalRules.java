package dev.gpudf.sql;

import org.apache.calcite.plan.RelOptRule;
import org.apache.calcite.rel.rules.AggregateExpandDistinctAggregatesRule;
import org.apache.calcite.rel.rules.AggregateUnionTransposeRule;
import org.apache.calcite.rel.rules.ExpandDisjunctionForTableRule;
import org.apache.calcite.rel.rules.FilterJoinRule;
import org.apache.calcite.rel.rules.JoinPushExpressionsRule;
import org.apache.calcite.rel.rules.JoinToMultiJoinRule;
import org.apache.calcite.rel.rules.LoptOptimizeJoinRule;
import org.apache.calcite.rel.rules.ProjectJoinTransposeRule;
import org.apache.calcite.rel.rules.ProjectMergeRule;
import org.apache.calcite.rel.rules.ProjectRemoveRule;
import org.apache.calcite.rel.rules.ProjectToWindowRule;
import org.apache.calcite.rel.rules.ReduceExpressionsRule;
import org.apache.calcite.rel.rules.SubQueryRemoveRule;

/**
 * The Calcite rules gpudf's planner runs, each made from its own default configuration as
 * Calcite's {@code CoreRules} makes it. Not {@code CoreRules} itself: its initialisation builds
 * all of Calcite's 150-odd rules, 270 ms of a fresh process without the class-data archive (and
 * still a share of each {@code gpudf sql} statement's planning with it), for the 17 used here.
 */
final class LogicalRules {
  static final RelOptRule PROJECT_REMOVE = ProjectRemoveRule.Config.DEFAULT.toRule();
  static final RelOptRule PROJECT_MERGE = ProjectMergeRule.Config.DEFAULT.toRule();
  /**
   * A projection over a join narrows the join's inputs to the columns it and the join condition
   * read; only column references move below the join, never expressions (an expression moved to
   * the null-extended side of an outer join would be computed where the join then writes NULL).
   */
  static final RelOptRule PROJECT_JOIN_NARROW = ProjectJoinTransposeRule.Config.DEFAULT
      .withPreserveExprCondition(e -> false).toRule();
  static final RelOptRule FILTER_INTO_JOIN = FilterJoinRule.FilterIntoJoinRule.FilterIntoJoinRuleConfig.DEFAULT.toRule();
  static final RelOptRule JOIN_CONDITION_PUSH =
      FilterJoinRule.JoinConditionPushRule.JoinConditionPushRuleConfig.DEFAULT.toRule();
  static final RelOptRule JOIN_PUSH_EXPRESSIONS = JoinPushExpressionsRule.Config.DEFAULT.toRule();
  static final RelOptRule JOIN_TO_MULTI_JOIN = JoinToMultiJoinRule.Config.DEFAULT.toRule();
  static final RelOptRule MULTI_JOIN_OPTIMIZE = LoptOptimizeJoinRule.Config.DEFAULT.toRule();
  static final RelOptRule FILTER_SUB_QUERY_TO_CORRELATE = SubQueryRemoveRule.Config.FILTER.toRule();
  static final RelOptRule PROJECT_SUB_QUERY_TO_CORRELATE = SubQueryRemoveRule.Config.PROJECT.toRule();
  static final RelOptRule JOIN_SUB_QUERY_TO_CORRELATE = SubQueryRemoveRule.Config.JOIN.toRule();
  static final RelOptRule PROJECT_TO_LOGICAL_PROJECT_AND_WINDOW =
      ProjectToWindowRule.ProjectToLogicalProjectAndWindowRule.ProjectToLogicalProjectAndWindowRuleConfig.DEFAULT.toRule();
  static final RelOptRule EXPAND_FILTER_DISJUNCTION_GLOBAL = ExpandDisjunctionForTableRule.Config.FILTER.toRule();
  static final RelOptRule FILTER_REDUCE_EXPRESSIONS =
      ReduceExpressionsRule.FilterReduceExpressionsRule.FilterReduceExpressionsRuleConfig.DEFAULT.toRule();
  static final RelOptRule PROJECT_REDUCE_EXPRESSIONS =
      ReduceExpressionsRule.ProjectReduceExpressionsRule.ProjectReduceExpressionsRuleConfig.DEFAULT.toRule();
  static final RelOptRule AGGREGATE_UNION_TRANSPOSE = AggregateUnionTransposeRule.Config.DEFAULT.toRule();
  static final RelOptRule AGGREGATE_EXPAND_DISTINCT_AGGREGATES_TO_JOIN =
      AggregateExpandDistinctAggregatesRule.Config.JOIN.toRule();

  private LogicalRules() {}
}
