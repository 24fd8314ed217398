// The ranks analysis on synthetic jobs whose every number is known (support/rank_trace.h).
#include "analyze/ranks/job_ranks.h"

#include <gtest/gtest.h>

#include "analyze/report/report_model.h"
#include "support/rank_trace.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

constexpr uint64_t kUs = 1000;

testing::RankJobOptions SlowRankJob() {
  testing::RankJobOptions o;
  o.ranks = 2;
  o.steps = 10;
  o.slow_rank = 1;
  o.delay_ns = 200 * kUs;
  o.with_agent = true;
  return o;
}

Trace Load(const testing::RankJobOptions& o, testing::TempDir& dir) {
  EXPECT_TRUE(testing::WriteRankJob(o, dir.path()).ok());
  auto trace = LoadTrace(dir.path());
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  return std::move(trace).value();
}

TEST(RanksAnalysis, OverlapAndStragglerOfTwoRanksOnOneHost) {
  testing::TempDir dir;
  const Trace trace = Load(SlowRankJob(), dir);
  RanksModel m = AnalyzeRanks(trace);
  // The agent (no rank, no kernels) is not a rank.
  ASSERT_EQ(m.ranks.size(), 2u);
  const RankRow& fast = m.ranks[0];
  const RankRow& slow = m.ranks[1];
  EXPECT_EQ(fast.rank, 0);
  EXPECT_EQ(slow.rank, 1);
  EXPECT_EQ(fast.label, "rank 0 (node0, GPU 0)");
  EXPECT_EQ(slow.label, "rank 1 (node0, GPU 1)");
  // Per step: compute [0, 600 us); all-reduce from 400 us to 700 us + the slow rank's 200 us.
  EXPECT_EQ(fast.compute_ns, 10 * 600 * kUs);
  EXPECT_EQ(fast.comm_ns, 10 * 500 * kUs);
  EXPECT_EQ(fast.overlap_ns, 10 * 200 * kUs);
  EXPECT_EQ(fast.exposed_comm_ns(), 10 * 300 * kUs);
  EXPECT_DOUBLE_EQ(fast.overlap_fraction(), 0.4);
  EXPECT_EQ(slow.compute_ns, 10 * 600 * kUs);
  EXPECT_EQ(slow.comm_ns, 10 * 300 * kUs);
  EXPECT_EQ(slow.overlap_ns, 10 * 200 * kUs);
  EXPECT_EQ(fast.kernels, 30u);
  EXPECT_EQ(fast.comm_kernels, 10u);
  // Rank 1 reached every all-reduce 200 us after rank 0.
  EXPECT_EQ(slow.collectives, 10u);
  EXPECT_EQ(slow.last_arrivals, 10u);
  EXPECT_EQ(slow.delay_median_ns, 200 * kUs);
  EXPECT_EQ(slow.delay_total_ns, 10 * 200 * kUs);
  EXPECT_EQ(fast.last_arrivals, 0u);
  // Each rank's collectives span from its arrival at the first to the end of the tenth.
  EXPECT_EQ(fast.first_collective_ns, testing::kJobStartNs + 400 * kUs);
  EXPECT_EQ(slow.first_collective_ns, testing::kJobStartNs + 600 * kUs);
  EXPECT_EQ(fast.last_collective_end_ns, testing::kJobStartNs + 18'900 * kUs);
  EXPECT_EQ(slow.last_collective_end_ns, fast.last_collective_end_ns);
  ASSERT_TRUE(m.straggler.has_value());
  EXPECT_EQ(m.straggler->rank, 1);
  EXPECT_EQ(m.straggler->delay_median_ns, 200 * kUs);
  EXPECT_DOUBLE_EQ(m.straggler->share_of_waiting, 1.0);
  ASSERT_EQ(m.collectives.size(), 1u);
  EXPECT_EQ(m.collectives[0].kind, "AllReduce");
  EXPECT_EQ(m.collectives[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(m.collectives[0].instances, 10u);
  EXPECT_EQ(m.collectives[0].ranks, 2u);
  EXPECT_EQ(m.collectives[0].arrival_spread_median_ns, 200 * kUs);
  EXPECT_EQ(m.collectives[0].end_spread_median_ns, 0u);
  EXPECT_TRUE(m.clocks.empty());  // one host: nothing to align
  EXPECT_TRUE(m.warnings.empty());

  // Streaming from the directory gives the same figures.
  auto streamed = AnalyzeRanks(dir.path());
  ASSERT_TRUE(streamed.ok());
  ASSERT_EQ(streamed->ranks.size(), 2u);
  EXPECT_EQ(streamed->ranks[0].overlap_ns, fast.overlap_ns);
  EXPECT_EQ(streamed->straggler->delay_total_ns, m.straggler->delay_total_ns);
}

TEST(RanksAnalysis, NoStragglerWhenRanksArriveTogether) {
  testing::TempDir dir;
  testing::RankJobOptions o;
  o.ranks = 4;
  o.steps = 3;
  RanksModel m = AnalyzeRanks(Load(o, dir));
  ASSERT_EQ(m.ranks.size(), 4u);
  EXPECT_FALSE(m.straggler.has_value());
  EXPECT_EQ(m.collectives[0].ranks, 4u);
  EXPECT_EQ(m.collectives[0].arrival_spread_max_ns, 0u);
}

TEST(RanksAnalysis, ReportCarriesTheRanksSection) {
  testing::TempDir dir;
  const Trace trace = Load(SlowRankJob(), dir);
  auto report = BuildReport(dir.path(), ReportOptions());
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->ranks.ranks.size(), 2u);
  EXPECT_EQ(report->ranks.ranks[0].overlap_ns, 10 * 200 * kUs);
  ASSERT_TRUE(report->ranks.straggler.has_value());
  EXPECT_EQ(report->ranks.straggler->rank, 1);
  EXPECT_TRUE(report->energy.empty());  // no power readings in this job
  // With --pid, the section still lists every rank, with only that one's kernels.
  ReportOptions one;
  for (const RankRecord& r : trace.ranks) {
    if (r.rank == 1) one.pid = r.pid;
  }
  auto single = BuildReport(trace, one);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->ranks.ranks.size(), 2u);  // identities come from the whole trace
  EXPECT_EQ(single->ranks.ranks[1].kernels, 30u);
  EXPECT_EQ(single->ranks.ranks[0].kernels, 0u);
}

}  // namespace
}  // namespace gpuperf
