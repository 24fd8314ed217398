// Clock alignment of hosts whose clocks are offset by known amounts.
#include "analyze/ranks/clock_alignment.h"

#include <gtest/gtest.h>

#include "analyze/ranks/job_ranks.h"
#include "analyze/ranks/ranks_analysis.h"
#include "support/rank_trace.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

constexpr uint64_t kUs = 1000;
constexpr int64_t kHostBClock = 7'000'000'123;  // host B's CLOCK_MONOTONIC runs 7 s ahead
constexpr int64_t kWallError = 2'500'000;       // and its wall clock is 2.5 ms off

testing::RankJobOptions TwoHosts() {
  testing::RankJobOptions o;
  o.ranks = 4;
  o.steps = 12;
  o.hosts = {"nodeA", "nodeB"};  // ranks 0, 2 on A; 1, 3 on B
  o.host_clock_step_ns = kHostBClock;
  o.wall_error_ns = kWallError;
  o.slow_rank = 3;
  o.delay_ns = 150 * kUs;
  return o;
}

Trace Load(const testing::RankJobOptions& o, testing::TempDir& dir) {
  EXPECT_TRUE(testing::WriteRankJob(o, dir.path()).ok());
  auto trace = LoadTrace(dir.path());
  EXPECT_TRUE(trace.ok());
  return std::move(trace).value();
}

TEST(ClockAlignment, CollectivesRecoverAKnownOffset) {
  testing::TempDir dir;
  const Trace trace = Load(TwoHosts(), dir);
  const RankScan scan = ScanRanks(trace);
  EXPECT_EQ(ClockDomains(scan), 2u);
  const ClockAlignment clocks = AlignTraceClocks(trace, scan);
  ASSERT_EQ(clocks.hosts.size(), 2u);
  EXPECT_EQ(clocks.hosts[0].hostname, "nodeA");
  EXPECT_EQ(clocks.hosts[0].method, ClockMethod::kReference);
  const HostClock& b = clocks.hosts[1];
  EXPECT_EQ(b.hostname, "nodeB");
  EXPECT_EQ(b.pids.size(), 2u);
  EXPECT_EQ(b.method, ClockMethod::kCollectives);
  // The wall clocks alone are off by B's NTP error; the collectives find the truth.
  EXPECT_EQ(b.anchor_offset_ns, -kHostBClock + kWallError);
  EXPECT_EQ(b.offset_ns, -kHostBClock);
  EXPECT_EQ(b.uncertainty_ns, 0);
  EXPECT_EQ(b.collectives, 12u);
  EXPECT_EQ(clocks.OffsetOf(b.pids[0]), -kHostBClock);
  EXPECT_EQ(clocks.OffsetOf(clocks.hosts[0].pids[0]), 0);
  ASSERT_EQ(clocks.warnings.size(), 1u);  // the wall clocks' disagreement, said once
  EXPECT_NE(clocks.warnings[0].find("disagreed by 2.50 ms"), std::string::npos)
      << clocks.warnings[0];

  // On the aligned clock the straggler and its delay come out right.
  RanksModel m = AnalyzeRanks(trace);
  ASSERT_TRUE(m.straggler.has_value());
  EXPECT_EQ(m.straggler->rank, 3);
  EXPECT_EQ(m.straggler->delay_median_ns, 150 * kUs);
  EXPECT_EQ(m.collectives[0].end_spread_median_ns, 0u);
  ASSERT_EQ(m.clocks.size(), 2u);
  // The same from the directory, streamed.
  auto streamed = AnalyzeRanks(dir.path());
  ASSERT_TRUE(streamed.ok());
  EXPECT_EQ(streamed->straggler->delay_median_ns, 150 * kUs);
  EXPECT_EQ(streamed->clocks[1].offset_ns, -kHostBClock);
}

TEST(ClockAlignment, WallClockOnlyWithoutSharedCollectivesIsSaidToBeUnmeasured) {
  testing::TempDir dir;
  const RankScan scan = ScanRanks(Load(TwoHosts(), dir));
  const ClockAlignment clocks = AlignClocks(scan, nullptr);
  ASSERT_EQ(clocks.hosts.size(), 2u);
  EXPECT_EQ(clocks.hosts[1].method, ClockMethod::kWallClock);
  EXPECT_EQ(clocks.hosts[1].offset_ns, -kHostBClock + kWallError);
  EXPECT_EQ(clocks.hosts[1].uncertainty_ns, -1);
  ASSERT_EQ(clocks.warnings.size(), 1u);
  EXPECT_NE(clocks.warnings[0].find("by wall clock only"), std::string::npos);
}

TEST(ClockAlignment, UncertaintyIsTheSpreadOfTheCollectiveEnds) {
  testing::TempDir dir;
  const RankScan scan = ScanRanks(Load(TwoHosts(), dir));
  uint32_t a = 0, b = 0;
  for (const auto& [pid, p] : scan.processes) {
    if (p.rank == 0) a = pid;
    if (p.rank == 1) b = pid;
  }
  // Ends on B (its clock, after the wall-clock offset) differ from A's by these amounts.
  const int64_t anchor = -kHostBClock + kWallError;
  const int64_t residuals[] = {-3000, 1000, 0, 2000, -1000, 500, 400000};
  MatchedCollectives matched;
  for (int64_t r : residuals) {
    CollectiveInstance instance;
    const uint64_t end_a = 9'000'000'000;
    instance.arrivals.push_back({a, end_a - 100, end_a});
    instance.arrivals.push_back({b, 0, static_cast<uint64_t>(end_a - r - anchor)});
    matched.instances.push_back(instance);
  }
  const ClockAlignment clocks = AlignClocks(scan, &matched);
  const HostClock& host = clocks.hosts[1];
  EXPECT_EQ(host.offset_ns, anchor + 500);  // the median residual; the outlier does not move it
  // |r - 500| = 3500, 500, 500, 1500, 1500, 0, 399500 -> median 1500 -> 1.4826 * 1500.
  EXPECT_EQ(host.uncertainty_ns, 2224);
  EXPECT_EQ(host.collectives, 7u);
  EXPECT_EQ(host.max_deviation_ns, 399500);  // how far the worst collective disagreed
}

// Two communicators, each on its own stream; rank 0 (host A) uses A's stream first, rank 1
// (host B) B's. B's collectives end 500 us after A's. Matched by kernel order the first
// stream of each rank would pair A's collectives with B's, and the 500 us would be taken for
// clock error; NCCL's sequence numbers pair them right.
TEST(ClockAlignment, SequenceNumbersMatchCollectivesWhereKernelOrderWouldNot) {
  testing::TempDir dir;
  const RankScan scan = ScanRanks(Load(TwoHosts(), dir));
  uint32_t a = 0, b = 0;
  for (const auto& [pid, p] : scan.processes) {
    if (p.rank == 0) a = pid;
    if (p.rank == 1) b = pid;
  }
  const int64_t anchor = -kHostBClock + kWallError;  // what B's wall clock says
  const uint64_t kCommA = 0xa, kCommB = 0xb;
  auto partials = [&](bool with_calls) {
    std::vector<RankPartial> out(2);
    out[0].pid = a;
    out[1].pid = b;
    for (RankPartial& p : out) p.comm_names.push_back("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    for (uint64_t seq = 0; seq < 5; ++seq) {
      const uint64_t end_a = 9'000'000'000 + seq * 1'000'000, end_b = end_a + 500 * kUs;
      for (RankPartial& p : out) {
        // Host B's clock reads true time minus the anchor.
        const int64_t shift = p.pid == b ? -anchor : 0;
        const bool a_first = p.pid == a;
        for (int n = 0; n < 2; ++n) {
          const bool comm_a = (n == 0) == a_first;
          const uint64_t end = (comm_a ? end_a : end_b) + shift;
          const uint32_t stream = comm_a ? 1 : 2;
          // Rank 1's B kernel starts first (it waits longer), so B's stream is its first.
          const uint64_t length = !comm_a && !a_first ? 800 * kUs : 100 * kUs;
          p.comm.push_back({1, stream, 0, end - length, end, 0});
          if (!with_calls) continue;
          JoinedNcclCall call;
          call.comm_hash = comm_a ? kCommA : kCommB;
          call.nranks = 2;
          call.seq = seq;
          call.func = "AllReduce";
          call.kernel = static_cast<int64_t>(p.comm.size() - 1);
          call.primary = true;
          p.calls.push_back(call);
        }
      }
    }
    return out;
  };
  const ClockAlignment by_sequence = AlignRanks(scan, partials(true));
  EXPECT_TRUE(by_sequence.matched_by_sequence);
  ASSERT_EQ(by_sequence.hosts.size(), 2u);
  EXPECT_EQ(by_sequence.hosts[1].offset_ns, anchor);
  EXPECT_EQ(by_sequence.hosts[1].collectives, 10u);
  EXPECT_EQ(by_sequence.hosts[1].uncertainty_ns, 0);
  EXPECT_EQ(by_sequence.hosts[1].max_deviation_ns, 0);
  // Without the plugin's records, kernel order pairs A's with B's: off by 500 us.
  const ClockAlignment by_order = AlignRanks(scan, partials(false));
  EXPECT_FALSE(by_order.matched_by_sequence);
  EXPECT_EQ(std::llabs(by_order.hosts[1].offset_ns - anchor), static_cast<int64_t>(500 * kUs));
}

// A job of many hosts gets one line for what concerns them all, not a line per host.
TEST(ClockAlignment, ManyHostsShareOneWarning) {
  testing::TempDir dir;
  testing::RankJobOptions o = TwoHosts();
  o.ranks = 6;
  o.slow_rank = 5;
  o.hosts = {"n0", "n1", "n2", "n3", "n4", "n5"};  // host h's wall clock is h x 2.5 ms off
  const Trace trace = Load(o, dir);
  const RankScan scan = ScanRanks(trace);
  const ClockAlignment clocks = AlignTraceClocks(trace, scan);
  ASSERT_EQ(clocks.hosts.size(), 6u);
  ASSERT_EQ(clocks.warnings.size(), 1u);
  EXPECT_EQ(clocks.warnings[0],
            "the wall clocks of 5 hosts disagreed with n0's by 2.50 ms to 12.5 ms (n5); "
            "corrected on their collectives");
  // Three or fewer: a line each.
  o.ranks = 4;
  o.slow_rank = 3;
  o.hosts = {"n0", "n1", "n2", "n3"};
  testing::TempDir four;
  const Trace fewer = Load(o, four);
  EXPECT_EQ(AlignTraceClocks(fewer, ScanRanks(fewer)).warnings.size(), 3u);
}

TEST(ClockAlignment, OneHostNeedsNothing) {
  testing::TempDir dir;
  testing::RankJobOptions o;
  o.with_agent = true;
  const RankScan scan = ScanRanks(Load(o, dir));
  EXPECT_EQ(ClockDomains(scan), 1u);
  const ClockAlignment clocks = AlignClocks(scan, nullptr);
  EXPECT_TRUE(clocks.hosts.empty());
  EXPECT_TRUE(clocks.identity());
}

}  // namespace
}  // namespace gpuperf
