#include "analyze/join/correlation.h"

#include <gtest/gtest.h>

#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::TestTrace;

const GpuActivity& KernelAt(const Correlation& c, size_t index) {
  size_t seen = 0;
  for (const GpuActivity& a : c.activities) {
    if (a.kind == GpuActivityKind::kKernel && seen++ == index) return a;
  }
  static GpuActivity none;
  ADD_FAILURE() << "no kernel #" << index;
  return none;
}

TEST(Correlation, ThreadsKeepTheirOwnStacksAndIdentity) {
  TestTrace t;
  const StackId a = t.Stack(10, {"main", "worker_a", "launch_a"});
  const StackId b = t.Stack(10, {"main", "worker_b", "launch_b"});
  // Two threads launching in interleaved order; kernels complete in another order.
  t.Link(10, 11, 1, a, "cudaLaunchKernel", 100);
  t.Link(10, 12, 2, b, "cudaLaunchKernel", 110);
  t.Link(10, 11, 3, a, "cudaLaunchKernel", 120);
  t.Kernel(10, "k_b", 2, 1000, 1500);
  t.Kernel(10, "k_a", 3, 1500, 1600);
  t.Kernel(10, "k_a", 1, 900, 1000);

  Correlation c = Correlate(t.trace());
  ASSERT_EQ(c.activities.size(), 3u);
  EXPECT_EQ(KernelAt(c, 0).stack_id, b);
  EXPECT_EQ(KernelAt(c, 0).launch_tid, 12u);
  EXPECT_EQ(KernelAt(c, 0).launch_ns, 110u);
  EXPECT_EQ(KernelAt(c, 1).stack_id, a);
  EXPECT_EQ(KernelAt(c, 1).launch_tid, 11u);
  EXPECT_EQ(KernelAt(c, 2).stack_id, a);
  EXPECT_EQ(KernelAt(c, 2).launch_ns, 100u);
  EXPECT_EQ(c.stats.kernels.joined, 3u);
  EXPECT_EQ(c.stats.kernels.unmatched(), 0u);
}

TEST(Correlation, DeviceAndStreamAreKept) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main"});
  t.Link(10, 10, 1, s, "cudaLaunchKernel");
  t.Link(10, 10, 2, s, "cudaLaunchKernel");
  t.Kernel(10, "k", 1, 0, 10, /*device=*/1, /*stream=*/13);
  t.Kernel(10, "k", 2, 0, 10, /*device=*/0, /*stream=*/14);
  Correlation c = Correlate(t.trace());
  EXPECT_EQ(KernelAt(c, 0).device_id, 1u);
  EXPECT_EQ(KernelAt(c, 0).stream_id, 13u);
  EXPECT_EQ(KernelAt(c, 1).device_id, 0u);
  EXPECT_EQ(KernelAt(c, 1).stream_id, 14u);
  EXPECT_EQ(KernelAt(c, 1).duration_ns(), 10u);
}

TEST(Correlation, NestedRuntimeAndDriverIdsReachTheOutermostStack) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main", "step"});
  // cudaLaunchKernel (id 40) called cuLaunchKernel (id 41): a link for each id.
  t.Link(10, 10, 40, s, "cudaLaunchKernel");
  t.Link(10, 10, 41, s, "cudaLaunchKernel");
  t.Kernel(10, "via_driver_id", 41, 0, 10);
  t.Kernel(10, "via_runtime_id", 40, 10, 20);
  Correlation c = Correlate(t.trace());
  for (const GpuActivity& a : c.activities) {
    EXPECT_EQ(a.join, LaunchJoin::kJoined);
    EXPECT_EQ(a.stack_id, s);
    EXPECT_EQ(t.trace().str(a.launch_api), "cudaLaunchKernel");
  }
  EXPECT_EQ(c.stats.kernels.joined, 2u);
}

TEST(Correlation, GraphLaunchOwnsEveryKernelOfTheLaunch) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main", "replay_graph"});
  t.Link(10, 10, 7, s, "cudaGraphLaunch");
  for (int i = 0; i < 3; ++i) {
    KernelRecord& k = t.Kernel(10, "graph_node_kernel", 7, 100 * i, 100 * i + 50);
    k.graph_id = 3;
    k.graph_node_id = 100 + i;
  }
  Correlation c = Correlate(t.trace());
  ASSERT_EQ(c.activities.size(), 3u);
  for (const GpuActivity& a : c.activities) {
    EXPECT_EQ(a.join, LaunchJoin::kJoined);
    EXPECT_EQ(a.stack_id, s);
    EXPECT_EQ(a.graph_id, 3u);
    EXPECT_EQ(t.trace().str(a.launch_api), "cudaGraphLaunch");
  }
  EXPECT_EQ(c.activities[2].graph_node_id, 102u);
  EXPECT_EQ(c.stats.links, 1u);
}

TEST(Correlation, OneDroppedLinkMisattributesNothingElse) {
  TestTrace t;
  std::vector<StackId> stacks;
  for (int i = 0; i < 5; ++i) stacks.push_back(t.Stack(10, {"main", "site" + std::to_string(i)}));
  for (uint32_t i = 0; i < 5; ++i) {
    if (i != 1) t.Link(10, 10, i + 1, stacks[i], "cudaLaunchKernel");  // link of #1 was lost
    t.Kernel(10, "k" + std::to_string(i), i + 1, 10 * i, 10 * i + 5);
  }
  Correlation c = Correlate(t.trace());
  ASSERT_EQ(c.activities.size(), 5u);  // the unmatched kernel is kept, not dropped
  for (uint32_t i = 0; i < 5; ++i) {
    const GpuActivity& a = KernelAt(c, i);
    if (i == 1) {
      EXPECT_EQ(a.join, LaunchJoin::kNoLink);
      EXPECT_EQ(a.stack_id, 0u);
      EXPECT_EQ(a.launch_api, 0u);
    } else {
      EXPECT_EQ(a.join, LaunchJoin::kJoined);
      EXPECT_EQ(a.stack_id, stacks[i]) << "kernel " << i;
    }
  }
  EXPECT_EQ(c.stats.kernels.total, 5u);
  EXPECT_EQ(c.stats.kernels.no_link, 1u);
  EXPECT_EQ(c.stats.kernels.joined, 4u);
}

TEST(Correlation, LinkWithoutStackKeepsApiAndThread) {
  TestTrace t;
  t.Link(10, 15, 1, 0, "cuLaunchKernel");  // unwinding failed
  t.Kernel(10, "k", 1, 0, 10);
  Correlation c = Correlate(t.trace());
  ASSERT_EQ(c.activities.size(), 1u);
  EXPECT_EQ(c.activities[0].join, LaunchJoin::kNoStack);
  EXPECT_EQ(t.trace().str(c.activities[0].launch_api), "cuLaunchKernel");
  EXPECT_EQ(c.activities[0].launch_tid, 15u);
  EXPECT_EQ(c.stats.kernels.no_stack, 1u);
  EXPECT_EQ(c.stats.kernels.unmatched(), 1u);
}

TEST(Correlation, LinkToAStackTheTraceLacksIsCounted) {
  TestTrace t;
  t.Link(10, 10, 1, 99, "cudaLaunchKernel");  // stack chunk lost to damage
  t.Kernel(10, "k", 1, 0, 10);
  Correlation c = Correlate(t.trace());
  EXPECT_EQ(c.activities[0].join, LaunchJoin::kStackLost);
  EXPECT_EQ(c.stats.kernels.stack_lost, 1u);
}

TEST(Correlation, ProcessesWithTheSameCorrelationIdsStayApart) {
  TestTrace t;
  const StackId a = t.Stack(10, {"proc_a"});
  const StackId b = t.Stack(20, {"proc_b"});
  t.Link(10, 10, 1, a, "cudaLaunchKernel");
  t.Link(20, 20, 1, b, "cudaLaunchKernel");
  t.Kernel(20, "k", 1, 0, 10);
  t.Kernel(10, "k", 1, 0, 10);
  t.Kernel(30, "k", 1, 0, 10);  // a third process without links
  Correlation c = Correlate(t.trace());
  EXPECT_EQ(KernelAt(c, 0).stack_id, b);
  EXPECT_EQ(KernelAt(c, 1).stack_id, a);
  EXPECT_EQ(KernelAt(c, 2).join, LaunchJoin::kNoLink);
}

TEST(Correlation, CopiesFallBackToTheRuntimeCorrelationId) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main", "upload"});
  t.Link(10, 10, 50, s, "cudaMemcpyAsync");
  MemcpyRecord& copy = t.Memcpy(10, MemcpyKind::kHtoD, /*driver id=*/51, 0, 100);
  copy.runtime_correlation_id = 50;
  t.Memcpy(10, MemcpyKind::kDtoH, 50, 100, 200);  // joins directly
  t.Link(10, 10, 60, s, "cudaMemsetAsync");
  t.Memset(10, 60, 200, 250);
  Correlation c = Correlate(t.trace());
  ASSERT_EQ(c.activities.size(), 3u);
  EXPECT_EQ(c.activities[0].kind, GpuActivityKind::kMemcpy);
  EXPECT_EQ(c.activities[0].join, LaunchJoin::kJoined);
  EXPECT_EQ(c.activities[0].correlation_id, 50u);
  EXPECT_EQ(c.activities[0].memcpy_kind, MemcpyKind::kHtoD);
  EXPECT_EQ(c.activities[1].join, LaunchJoin::kJoined);
  EXPECT_EQ(c.activities[2].kind, GpuActivityKind::kMemset);
  EXPECT_EQ(c.activities[2].join, LaunchJoin::kJoined);
  EXPECT_EQ(c.stats.memcpy_runtime_ids, 1u);
  EXPECT_EQ(c.stats.memcpys.joined, 2u);
  EXPECT_EQ(c.stats.memsets.joined, 1u);
}

TEST(Correlation, DuplicateLinksKeepTheFirst) {
  TestTrace t;
  const StackId first = t.Stack(10, {"first"});
  const StackId second = t.Stack(10, {"second"});
  t.Link(10, 10, 1, first, "cudaLaunchKernel");
  t.Link(10, 10, 1, second, "cudaLaunchKernel");
  t.Kernel(10, "k", 1, 0, 10);
  Correlation c = Correlate(t.trace());
  EXPECT_EQ(c.activities[0].stack_id, first);
  EXPECT_EQ(c.stats.duplicate_links, 1u);
}

TEST(Correlation, LargeAndSparseCorrelationIds) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main"});
  t.Link(10, 10, 0xfffffff0u, s, "cudaLaunchKernel");
  t.Link(10, 10, 4096, s, "cudaLaunchKernel");
  t.Kernel(10, "high", 0xfffffff0u, 0, 1);
  t.Kernel(10, "page_edge", 4096, 0, 1);
  t.Kernel(10, "neighbour", 4095, 0, 1);
  Correlation c = Correlate(t.trace());
  EXPECT_EQ(KernelAt(c, 0).join, LaunchJoin::kJoined);
  EXPECT_EQ(KernelAt(c, 1).join, LaunchJoin::kJoined);
  EXPECT_EQ(KernelAt(c, 2).join, LaunchJoin::kNoLink);
}

TEST(Correlator, FindLinkReadsLinksOfAnyApiCall) {
  TestTrace t;
  const StackId alloc = t.Stack(10, {"main", "allocate"});
  const StackId launch = t.Stack(10, {"main", "step"});
  t.Link(10, 11, 5, alloc, "cudaMalloc", 400);  // no GPU record will ever name id 5
  t.Link(10, 12, 6, launch, "cudaLaunchKernel", 500);
  t.Link(10, 12, 6, alloc, "cuLaunchKernel", 510);  // a repeated link: the first is kept
  t.Link(20, 21, 5, launch, "cudaFree", 600);

  Correlator correlator([](const GpuActivity&) {});
  correlator.AddLinks(t.trace().launch_links);
  const Correlator& reader = correlator;

  const LaunchLink* malloc_link = reader.FindLink(10, 5);
  ASSERT_NE(malloc_link, nullptr);
  EXPECT_EQ(malloc_link->stack_id, alloc);
  EXPECT_EQ(t.trace().str(malloc_link->api), "cudaMalloc");
  EXPECT_EQ(malloc_link->tid, 11u);
  EXPECT_EQ(malloc_link->launch_ns, 400u);
  EXPECT_EQ(malloc_link->records, 1u);

  const LaunchLink* repeated = reader.FindLink(10, 6);
  ASSERT_NE(repeated, nullptr);
  EXPECT_EQ(repeated->stack_id, launch);
  EXPECT_EQ(repeated->launch_ns, 500u);
  EXPECT_EQ(repeated->records, 2u);

  ASSERT_NE(reader.FindLink(20, 5), nullptr);
  EXPECT_EQ(t.trace().str(reader.FindLink(20, 5)->api), "cudaFree");
  EXPECT_EQ(reader.FindLink(10, 7), nullptr);         // same page, never linked
  EXPECT_EQ(reader.FindLink(10, 1u << 20), nullptr);  // a page never used
  EXPECT_EQ(reader.FindLink(30, 5), nullptr);         // a process without links
  EXPECT_EQ(correlator.stats().links, 4u);
  EXPECT_EQ(correlator.stats().duplicate_links, 1u);
}

TEST(Correlator, RecordsArrivingBeforeTheirLinksJoinAtFinish) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main"});
  t.Link(10, 10, 1, s, "cudaLaunchKernel");
  t.Kernel(10, "early", 1, 0, 10);
  t.Kernel(10, "orphan", 2, 0, 10);

  std::vector<GpuActivity> out;
  Correlator correlator([&out](const GpuActivity& a) { out.push_back(a); });
  correlator.AddStack(s);
  correlator.AddKernels(t.trace().kernels);  // before any link, as a stream may deliver
  EXPECT_TRUE(out.empty());
  correlator.AddLinks(t.trace().launch_links);
  correlator.Finish();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].join, LaunchJoin::kJoined);
  EXPECT_EQ(out[0].record_index, 0u);
  EXPECT_EQ(out[1].join, LaunchJoin::kNoLink);
  EXPECT_EQ(out[1].record_index, 1u);
  EXPECT_EQ(correlator.stats().kernels.joined, 1u);
  EXPECT_EQ(correlator.stats().kernels.no_link, 1u);
}

TEST(Correlator, WaitingRecordsAreRetriedAsTheListGrows) {
  // 40k kernels, then their links, then 40k more kernels whose links come last: the
  // first 40k must not wait for Finish() (memory stays bounded on long streams).
  constexpr uint32_t kHalf = 40'000;
  std::vector<LaunchLinkRecord> links;
  std::vector<KernelRecord> kernels;
  for (uint32_t i = 1; i <= 2 * kHalf; ++i) {
    links.push_back(LaunchLinkRecord{1, 1, i, 1, 0, 0});
    KernelRecord k;
    k.pid = 1;
    k.correlation_id = i;
    k.end_ns = 1;
    kernels.push_back(k);
  }
  size_t emitted = 0;
  Correlator correlator([&emitted](const GpuActivity& a) {
    EXPECT_EQ(a.join, LaunchJoin::kJoined);
    ++emitted;
  });
  correlator.AddStack(1);
  std::span<const KernelRecord> all(kernels);
  std::span<const LaunchLinkRecord> all_links(links);
  correlator.AddKernels(all.first(kHalf));
  correlator.AddLinks(all_links.first(kHalf));
  EXPECT_EQ(emitted, 0u);
  correlator.AddKernels(all.subspan(kHalf));
  EXPECT_GE(emitted, kHalf);  // retried when the list reached 64Ki
  correlator.AddLinks(all_links.subspan(kHalf));
  correlator.Finish();
  EXPECT_EQ(emitted, 2 * kHalf);
  EXPECT_EQ(correlator.stats().kernels.joined, 2 * kHalf);
}

}  // namespace
}  // namespace gpuperf
