// The insight rules: each looks at the input (insight_input.h) for one kind of problem and
// adds an Insight per finding, with its evidence, the stack that causes it and what to
// try. One file per rule (rule_<id>.cc); a new rule is its file plus one line in
// kRules (rules.cc). RunInsights runs them all and ranks the findings by time at stake.
//
// Rules about one process run on any trace. Rules that compare the ranks of one job
// (a straggler rank, load imbalance, communication not overlapped with compute, a GPU's
// power) need to know which processes are ranks of the same job: they take a
// RankInsightInput and go in kRankRules, which RunInsights runs only when the report
// was given ranks (see docs/insights.md, "Adding a rule").
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analyze/insights/insight_input.h"
#include "analyze/report/insight.h"

namespace gpuperf::insights {

using RuleFunction = void (*)(InsightInput& input, std::vector<Insight>& out);

struct Rule {
  std::string_view id;       // Insight::rule of its findings
  std::string_view summary;  // one line, for docs and --help
  RuleFunction run;
};

// One rank of a multi-rank job, as the multi-rank analysis identifies it.
struct RankInfo {
  uint32_t pid = 0;
  uint32_t rank = 0;
  uint32_t local_rank = 0;
  uint32_t world_size = 0;
};

// What a rule across ranks reads: the per-process input (every rank's work is in it)
// plus which process is which rank. Clock alignment across hosts is the multi-rank
// analysis's to apply before the rules run.
struct RankInsightInput {
  InsightInput& input;
  std::vector<RankInfo> ranks;
};

using RankRuleFunction = void (*)(RankInsightInput& input, std::vector<Insight>& out);

struct RankRule {
  std::string_view id;
  std::string_view summary;
  RankRuleFunction run;
};

// The rules of one process, in the order they run.
std::span<const Rule> ProcessRules();
// The rules across ranks, in the order they run.
std::span<const RankRule> RankRules();

// Runs every rule (the rank rules only when `ranks` is not empty) and returns the
// findings, most time at stake first; memory findings last, by bytes.
std::vector<Insight> RunInsights(InsightInput& input, const std::vector<RankInfo>& ranks = {});

// The rules, declared here and defined in rule_<id>.cc.
void GpuIdleGaps(InsightInput& input, std::vector<Insight>& out);
void LaunchBound(InsightInput& input, std::vector<Insight>& out);
void SyncStalls(InsightInput& input, std::vector<Insight>& out);
void PageableCopies(InsightInput& input, std::vector<Insight>& out);
void TinyCopies(InsightInput& input, std::vector<Insight>& out);
void LowOccupancy(InsightInput& input, std::vector<Insight>& out);
void MemoryGrowth(InsightInput& input, std::vector<Insight>& out);
void StragglerRank(RankInsightInput& input, std::vector<Insight>& out);
void RankLoadImbalance(RankInsightInput& input, std::vector<Insight>& out);
void CommNotOverlapped(RankInsightInput& input, std::vector<Insight>& out);
void RankPowerOutlier(RankInsightInput& input, std::vector<Insight>& out);

}  // namespace gpuperf::insights
