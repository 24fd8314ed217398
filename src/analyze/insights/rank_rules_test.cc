// The rules across ranks (straggler_rank, rank_load_imbalance, comm_not_overlapped,
// rank_power), each on a synthetic job that shows the problem and one that does not
// (support/rank_trace.h: every number known), read back by the real report as
// `gpuperf report DIR --insights` would.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "analyze/insights/insights_section.h"
#include "analyze/insights/rules.h"
#include "analyze/report/report_model.h"
#include "export/report_export.h"
#include "support/insight_scenario.h"
#include "support/rank_trace.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::EvidenceValue;
using testing::RankJobOptions;

constexpr uint64_t kUs = 1000;

// Two ranks, 10 steps of 2 ms: forward and backward 300 µs each, an all-reduce after.
RankJobOptions TwoRanks() {
  RankJobOptions o;
  o.ranks = 2;
  o.steps = 10;
  return o;
}

ReportModel Report(const RankJobOptions& o) {
  testing::TempDir dir;
  EXPECT_TRUE(testing::WriteRankJob(o, dir.path()).ok());
  ReportOptions options;
  options.insights = true;
  auto model = BuildReport(dir.path(), options, report::kInsightsSection);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? std::move(model).value() : ReportModel();
}

std::vector<Insight> Insights(const RankJobOptions& o, std::string_view rule) {
  std::vector<Insight> out;
  for (Insight& in : Report(o).insights) {
    if (in.rule == rule) out.push_back(std::move(in));
  }
  return out;
}

bool Says(const Insight& in, std::string_view text) {
  return in.finding.find(text) != std::string::npos;
}

TEST(StragglerRank, ALateCpuIsNamedWithTheLaunchesItDelayed) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 1;
  o.delay_ns = 200 * kUs;  // rank 1 starts every step 200 µs late
  const std::vector<Insight> found = Insights(o, "straggler_rank");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(in.pid, o.first_pid + 1);
  EXPECT_EQ(in.device, 1u);
  EXPECT_EQ(in.stake, StakeKind::kGpuIdle);
  EXPECT_EQ(in.at_stake_ns, 10 * 200 * kUs);  // rank 0 waited 200 µs in each all-reduce
  EXPECT_EQ(EvidenceValue(in, "last_arrivals"), 10);
  EXPECT_EQ(EvidenceValue(in, "median_delay"), 200 * kUs);
  // Its kernels took as long as rank 0's; its GPU idled 200 µs longer before 9 of the
  // steps (the first has no gap before it).
  EXPECT_EQ(EvidenceValue(in, "compute"), EvidenceValue(in, "others_median_compute"));
  EXPECT_EQ(EvidenceValue(in, "idle_excess"), 9 * 200 * kUs);
  EXPECT_TRUE(Says(in, "Rank 1 (node0, GPU 1) reached 10 of its 10 collectives (AllReduce) last"))
      << in.finding;
  EXPECT_TRUE(Says(in, "its CPU launched late")) << in.finding;
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "train_step (app.cc:10)");
  // The waiting is the straggler's, not communication the job could overlap.
  EXPECT_TRUE(Insights(o, "comm_not_overlapped").empty());
}

TEST(StragglerRank, StartUpIdleBeforeTheFirstCollectiveIsNotCounted) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 1;
  o.delay_ns = 200 * kUs;
  // Rank 1's GPU also idles 5 ms in start-up, before a launch from setup_model: more than
  // its 9 late steps (1.8 ms), but no rank waits for it in a collective then.
  o.startup_idle_ns = 5'000 * kUs;
  const std::vector<Insight> found = Insights(o, "straggler_rank");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  // Between its collectives its GPU idled from the end of each all-reduce (900 µs into a
  // step) to the next step's forward (200 µs into it), 9 times; rank 0 200 µs less.
  EXPECT_EQ(EvidenceValue(in, "idle_before_launches"), 9 * 1'300 * kUs);
  EXPECT_EQ(EvidenceValue(in, "idle_excess"), 9 * 200 * kUs);
  EXPECT_TRUE(Says(in,
                   "its GPU sat idle 1.80 ms longer than the other ranks' before launches "
                   "between collectives from train_step"))
      << in.finding;
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "train_step (app.cc:10)");
  EXPECT_EQ(in.stack_role, "the launch that ended most of its GPU's idle time");
}

TEST(StragglerRank, LongerKernelsAreTheCauseWhenTheyAccountForTheDelay) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 1;
  o.slow_kernel_ns = 200 * kUs;  // rank 1's backward runs 500 µs instead of 300
  const std::vector<Insight> found = Insights(o, "straggler_rank");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(in.at_stake_ns, 10 * 200 * kUs);
  EXPECT_TRUE(Says(in,
                   "Its compute kernels ran 2.00 ms longer than the other ranks' (median): "
                   "backward +2.00 ms"))
      << in.finding;
  EXPECT_EQ(in.stack_role, "the launch of backward");
  // The imbalance is this straggler's: one finding, not two.
  EXPECT_TRUE(Insights(o, "rank_load_imbalance").empty());
}

TEST(StragglerRank, ArrivalJitterIsNoStraggler) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 1;
  o.delay_ns = 20 * kUs;  // last every time, but 200 µs in all: 1% of the run
  EXPECT_TRUE(Insights(o, "straggler_rank").empty());
  EXPECT_TRUE(Insights(TwoRanks(), "straggler_rank").empty());
}

TEST(RankLoadImbalance, ARankWithMoreGpuWorkIsNamedWithItsKernels) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 0;
  o.extra_kernel_ns = 200 * kUs;  // rank 0 evaluates after each all-reduce, in the step's slack
  const std::vector<Insight> found = Insights(o, "rank_load_imbalance");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(in.pid, o.first_pid);
  EXPECT_EQ(in.at_stake_ns, 10 * 200 * kUs);
  EXPECT_EQ(EvidenceValue(in, "compute"), 10 * 800 * kUs);
  EXPECT_EQ(EvidenceValue(in, "others_median_compute"), 10 * 600 * kUs);
  EXPECT_TRUE(Says(in,
                   "2.00 ms (33.3%) longer than rank 1 (node0, GPU 1): 6.00 ms; longer "
                   "kernels: evaluate +2.00 ms"))
      << in.finding;
  EXPECT_EQ(in.stack_role, "the launch of evaluate");
  // Its extra work fit in the step: nobody reached a collective late.
  EXPECT_TRUE(Insights(o, "straggler_rank").empty());
}

TEST(RankLoadImbalance, AmongFourRanksTheMedianOfTheOthersIsTheYardstick) {
  RankJobOptions o = TwoRanks();
  o.ranks = 4;
  o.slow_rank = 2;
  o.extra_kernel_ns = 100 * kUs;
  const std::vector<Insight> found = Insights(o, "rank_load_imbalance");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pid, o.first_pid + 2);
  EXPECT_TRUE(Says(found[0],
                   "The GPU of rank 2 (node0, GPU 2) computed 7.00 ms, 1.00 ms (16.7%) "
                   "longer than the median of the other 3 ranks (6.00 ms; least: rank 0 "
                   "(node0, GPU 0), 6.00 ms)"))
      << found[0].finding;
}

TEST(RankLoadImbalance, AFewPercentIsNotImbalance) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 0;
  o.extra_kernel_ns = 30 * kUs;  // 5% more, 300 µs in all
  EXPECT_TRUE(Insights(o, "rank_load_imbalance").empty());
}

TEST(CommNotOverlapped, LongAllReducesAfterTheBackwardPassAreExposed) {
  RankJobOptions o = TwoRanks();
  o.comm_ns = 1500 * kUs;  // all-reduce [400 µs, 1.9 ms) of each step; compute ends at 600 µs
  const std::vector<Insight> found = Insights(o, "comm_not_overlapped");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(in.stake, StakeKind::kGpuTime);
  EXPECT_EQ(in.at_stake_ns, 10 * 1300 * kUs);
  EXPECT_EQ(EvidenceValue(in, "overlap"), 10 * 200 * kUs);
  EXPECT_NEAR(EvidenceValue(in, "overlap_fraction"), 200.0 / 1500, 1e-9);
  // Active span: 9 steps of 2 ms and the last one's 1.9 ms.
  EXPECT_NEAR(EvidenceValue(in, "share_of_active_span"), 13.0 / 19.9, 1e-9);
  EXPECT_TRUE(Says(in, "AllReduce 15.0 ms, 13.3% overlapped with compute")) << in.finding;
  EXPECT_NE(in.suggestion.find("bucket"), std::string::npos);  // overlap first
  EXPECT_EQ(in.stack_role, "the launch of ncclDevKernel_AllReduce_Sum_f32_RING_LL");
}

TEST(CommNotOverlapped, ShortAllReducesAreNotTheBottleneck) {
  // 100 µs exposed per 2 ms step: 5%.
  EXPECT_TRUE(Insights(TwoRanks(), "comm_not_overlapped").empty());
}

TEST(CommNotOverlapped, WaitingForAStragglerIsNotCommunication) {
  RankJobOptions o = TwoRanks();
  o.slow_rank = 1;
  o.delay_ns = 1000 * kUs;  // rank 0 spends 1.1 ms of each step in its all-reduce, waiting
  EXPECT_TRUE(Insights(o, "comm_not_overlapped").empty());
  EXPECT_EQ(Insights(o, "straggler_rank").size(), 1u);
}

RankJobOptions WithPower(double hot_scale) {
  RankJobOptions o = TwoRanks();
  o.power_interval_ns = 100 * kUs;  // 200 readings per GPU
  o.hot_rank = 1;
  o.hot_power_scale = hot_scale;
  return o;
}

TEST(RankPower, AGpuDrawingMoreForTheSameWorkIsNamed) {
  const std::vector<Insight> found = Insights(WithPower(1.3), "rank_power");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(in.pid, WithPower(1.3).first_pid + 1);
  EXPECT_EQ(in.stake, StakeKind::kEnergy);
  EXPECT_NEAR(EvidenceValue(in, "difference"), 0.3, 0.01);
  EXPECT_NEAR(EvidenceValue(in, "mean_power") / EvidenceValue(in, "others_median_power"), 1.3,
              1e-3);
  // 30% of about 160 W over the 20 ms sampled.
  EXPECT_NEAR(in.at_stake_joules, 0.3 * EvidenceValue(in, "others_median_power") * 0.02, 1e-3);
  EXPECT_TRUE(Says(in, "30.0% more than the median of the other ranks")) << in.finding;
}

TEST(RankPower, EnergyFindingsRankAfterTimedOnesAndRenderInJoules) {
  const ReportModel model = Report(WithPower(1.3));
  ASSERT_GE(model.insights.size(), 2u);
  EXPECT_EQ(model.insights.back().rule, "rank_power");
  for (size_t i = 0; i + 1 < model.insights.size(); ++i) {
    EXPECT_NE(model.insights[i].stake, StakeKind::kEnergy) << model.insights[i].rule;
  }
  ReportRenderOptions render;
  render.sections = {"insights"};
  std::ostringstream text, json;
  ASSERT_TRUE(ExportReportText(model, render, text).ok());
  ASSERT_TRUE(ExportReportJson(model, render, json).ok());
  EXPECT_NE(text.str().find("at stake: 0.9"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(" J of GPU energy (estimate)"), std::string::npos);
  EXPECT_NE(text.str().find("mean_power 207 W, others_median_power 160 W"), std::string::npos);
  const auto j = nlohmann::json::parse(json.str());
  const auto& at_stake = j["insights"].back()["at_stake"];
  EXPECT_EQ(at_stake["kind"], "energy");
  EXPECT_NEAR(at_stake["joules"].get<double>(), model.insights.back().at_stake_joules, 1e-9);
}

TEST(RankPower, SmallDifferencesAndUnevenWorkAreNotFindings) {
  EXPECT_TRUE(Insights(WithPower(1.05), "rank_power").empty());
  // A straggler idles more and so draws less: that is not the board's doing.
  RankJobOptions o = WithPower(1.3);
  o.slow_rank = 1;
  o.delay_ns = 500 * kUs;
  EXPECT_TRUE(Insights(o, "rank_power").empty());
  EXPECT_EQ(Insights(o, "straggler_rank").size(), 1u);
}

TEST(RankRules, OneProcessGetsNone) {
  RankJobOptions o = TwoRanks();
  o.ranks = 1;
  o.comm_ns = 1500 * kUs;
  testing::TempDir dir;
  ASSERT_TRUE(testing::WriteRankJob(o, dir.path()).ok());
  ReportOptions options;
  options.insights = true;
  auto model = BuildReport(dir.path(), options, report::kInsightsSection);
  ASSERT_TRUE(model.ok());
  for (const Insight& in : model->insights) {
    for (const insights::RankRule& rule : insights::RankRules()) EXPECT_NE(in.rule, rule.id);
  }
}

}  // namespace
}  // namespace gpuperf
