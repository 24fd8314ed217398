// The ranks analysis with NCCL profiler plugin records: joins, sizes, bandwidths, and
// instances matched by sequence number where kernel order would pair the wrong kernels.
#include "analyze/ranks/nccl_analysis.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/ranks/ranks_analysis.h"

namespace gpuperf {
namespace {

// String ids of the synthetic trace.
enum : StringId { kNone, kKernel, kAllReduce, kFloat32, kRing, kSimple, kStringCount };
const std::vector<std::string> kStrings = {
    "",      "ncclDevKernel_AllReduce_Sum_f32_RING_SIMPLE", "AllReduce", "ncclFloat32", "RING",
    "SIMPLE"};

constexpr uint64_t kCommA = 0xa, kCommB = 0xb;

struct Rank {
  uint32_t pid;
  int32_t rank;
  uint32_t tid;
  std::vector<KernelRecord> kernels;
  std::vector<LaunchLinkRecord> links;
  std::vector<NcclCollectiveRecord> collectives;

  // One collective of `count` floats on communicator `comm`, launched at `launch_ns` on
  // `stream`; its kernel runs [start, end).
  void Collective(uint64_t comm, uint64_t seq, uint64_t count, uint32_t stream, uint64_t launch_ns,
                  uint64_t start, uint64_t end) {
    const uint32_t correlation = static_cast<uint32_t>(kernels.size() + 1);
    KernelRecord k;
    k.pid = pid;
    k.name = kKernel;
    k.stream_id = stream;
    k.start_ns = start;
    k.end_ns = end;
    k.correlation_id = correlation;
    kernels.push_back(k);
    links.push_back({pid, tid, correlation, 0, 0, launch_ns});
    Call(comm, seq, count, tid, launch_ns + 5);
  }
  void Call(uint64_t comm, uint64_t seq, uint64_t count, uint32_t thread, uint64_t at) {
    NcclCollectiveRecord c;
    c.pid = pid;
    c.tid = thread;
    c.comm_hash = comm;
    c.rank = rank;
    c.nranks = 2;
    c.seq = seq;
    c.func = kAllReduce;
    c.count = count;
    c.type_size = 4;
    c.datatype = kFloat32;
    c.algorithm = kRing;
    c.protocol = kSimple;
    c.start_ns = at;
    c.end_ns = at + 3;
    collectives.push_back(c);
  }
};

RanksModel Analyze(std::vector<Rank>& ranks) {
  RankScan scan;
  for (const Rank& r : ranks) {
    ProcessIdentity& p = scan.processes[r.pid];
    p.pid = r.pid;
    p.rank = r.rank;
    p.world_size = 2;
  }
  scan.nccl_comms[kCommA] = {"A", 2};
  scan.nccl_comms[kCommB] = {"", 2};
  ClockAlignment clocks;
  RanksAnalysis analysis(scan, [](StringId id) -> std::string_view {
    return id < kStrings.size() ? std::string_view(kStrings[id]) : std::string_view();
  });
  for (Rank& r : ranks) {
    analysis.AddLaunchLinks(r.links);
    analysis.AddNcclCollectives(r.collectives);
    analysis.AddKernels(r.kernels);
  }
  return FinishRanks(scan, clocks, analysis.TakePartials(), /*shift=*/false);
}

TEST(NcclAnalysis, MatchesBySequenceNumberWhereKernelOrderWouldNot) {
  // Two communicators, each on its own stream. Rank 0 uses A's stream first, rank 1 B's: the
  // kernel-order match (streams by first use) would pair A on rank 0 with B on rank 1.
  std::vector<Rank> ranks = {{100, 0, 7, {}, {}, {}}, {200, 1, 9, {}, {}, {}}};
  ranks[0].Collective(kCommA, 0, 1000, 1, 900, 1000, 3000);
  ranks[0].Collective(kCommB, 0, 2000, 2, 1900, 2000, 6000);
  ranks[1].Collective(kCommB, 0, 2000, 5, 400, 500, 6000);
  ranks[1].Collective(kCommA, 0, 1000, 4, 1000, 1100, 3000);
  RanksModel m = Analyze(ranks);
  EXPECT_TRUE(m.matched_by_sequence);
  ASSERT_EQ(m.collectives.size(), 1u);
  EXPECT_EQ(m.collectives[0].instances, 2u);
  // A: starts 1000 and 1100; B: 2000 and 500. By kernel order they would be 500 and 900.
  EXPECT_EQ(m.collectives[0].arrival_spread_max_ns, 1500u);
  EXPECT_EQ(m.unmatched_comm_kernels, 0u);
  ASSERT_EQ(m.nccl.size(), 2u);
  // B's instance took longer: (6000 - 2000) against A's (3000 - 1100).
  const NcclCollectiveRow& b = m.nccl[0];
  const NcclCollectiveRow& a = m.nccl[1];
  EXPECT_EQ(b.comm_hash, kCommB);
  EXPECT_EQ(b.comm_name, "");
  EXPECT_EQ(b.time_ns, 4000u);
  EXPECT_EQ(b.bytes, 8000u);
  EXPECT_DOUBLE_EQ(b.algbw_gbps, 2.0);
  EXPECT_DOUBLE_EQ(b.busbw_gbps, 2.0);  // 2(n-1)/n = 1 for two ranks
  EXPECT_EQ(a.comm_name, "A");
  EXPECT_EQ(a.func, "AllReduce");
  EXPECT_EQ(a.time_ns, 1900u);
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.complete, 1u);
  EXPECT_EQ(a.algorithms, "RING/SIMPLE x2");
}

TEST(NcclAnalysis, GroupsShareTheirKernelAndStrayCallsStayUnjoined) {
  std::vector<Rank> ranks = {{100, 0, 7, {}, {}, {}}, {200, 1, 9, {}, {}, {}}};
  for (Rank& r : ranks) {
    r.Collective(kCommA, 0, 1000, 1, 100, 200, 1200);  // seq 0 and 1 in one kernel
    r.Call(kCommA, 1, 3000, r.tid, 110);
    r.Call(kCommA, 2, 500, 1234, 5000);  // on a thread that launched nothing: unjoined
  }
  RanksModel m = Analyze(ranks);
  ASSERT_EQ(m.nccl.size(), 1u);
  const NcclCollectiveRow& a = m.nccl[0];
  EXPECT_EQ(a.instances, 3u);
  EXPECT_EQ(a.calls, 6u);
  EXPECT_EQ(a.unjoined, 2u);
  EXPECT_EQ(m.nccl_unjoined, 2u);
  EXPECT_EQ(a.timed, 2u);
  // The 1000 ns kernel: a quarter for the 4000-byte call, three quarters for the 12000.
  EXPECT_EQ(a.time_ns, 1000u);
  EXPECT_EQ(a.timed_bytes, 16000u);
  EXPECT_EQ(a.bytes, 18000u);
  EXPECT_EQ(a.min_bytes, 2000u);
  // One straggler instance per kernel, not per call.
  ASSERT_EQ(m.collectives.size(), 1u);
  EXPECT_EQ(m.collectives[0].instances, 1u);
}

TEST(NcclAnalysis, ARankWithoutPluginRecordsKeepsKernelOrder) {
  std::vector<Rank> ranks = {{100, 0, 7, {}, {}, {}}, {200, 1, 9, {}, {}, {}}};
  ranks[0].Collective(kCommA, 0, 1000, 1, 900, 1000, 3000);
  ranks[1].Collective(kCommA, 0, 1000, 1, 900, 1100, 3000);
  ranks[1].collectives.clear();
  RanksModel m = Analyze(ranks);
  EXPECT_FALSE(m.matched_by_sequence);
  ASSERT_EQ(m.collectives.size(), 1u);
  EXPECT_EQ(m.collectives[0].instances, 1u);
  ASSERT_EQ(m.nccl.size(), 1u);
  EXPECT_EQ(m.nccl[0].ranks, 1u);
  EXPECT_EQ(m.nccl[0].complete, 0u);
}

}  // namespace
}  // namespace gpuperf
