#include "analyze/flame/launch_costs.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

GpuActivity Kernel(uint32_t correlation_id, uint64_t start, uint64_t end, StackId stack = 1) {
  GpuActivity a;
  a.pid = 1;
  a.correlation_id = correlation_id;
  a.start_ns = start;
  a.end_ns = end;
  a.name = 3;
  a.stack_id = stack;
  a.join = stack ? LaunchJoin::kJoined : LaunchJoin::kNoLink;
  a.launch_tid = stack ? 7 : 0;
  return a;
}

ApiRecord Call(uint32_t correlation_id, uint64_t start, uint64_t end) {
  ApiRecord api;
  api.pid = 1;
  api.tid = 7;
  api.correlation_id = correlation_id;
  api.start_ns = start;
  api.end_ns = end;
  return api;
}

// The aggregator with the API records it was given, to give them again when it asks.
struct Costs {
  LaunchCostAggregator aggregator;
  std::vector<ApiRecord> api;

  void Add(const GpuActivity& a) { aggregator.Add(a); }
  void AddApiCalls(const std::vector<ApiRecord>& calls) {
    aggregator.AddApiCalls(calls);
    api.insert(api.end(), calls.begin(), calls.end());
  }
  std::vector<LaunchCost> Finish() {
    if (aggregator.NeedsApiCallsAgain()) {
      // In two pieces, as a reader hands them over chunk by chunk.
      const size_t half = api.size() / 2;
      aggregator.RecallApiCalls(std::span(api).first(half));
      aggregator.RecallApiCalls(std::span(api).subspan(half));
    }
    return aggregator.Finish();
  }
};

TEST(LaunchCosts, ApiTimeJoinsWhicheverArrivesFirst) {
  Costs costs;
  costs.AddApiCalls(std::vector<ApiRecord>{Call(1, 0, 300)});
  costs.Add(Kernel(1, 1000, 1100));  // after its API record
  costs.Add(Kernel(2, 2000, 2050));  // before it
  costs.AddApiCalls(std::vector<ApiRecord>{Call(2, 500, 900), Call(3, 950, 990)});
  const std::vector<LaunchCost> result = costs.Finish();
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].gpu_ns, 150u);
  EXPECT_EQ(result[0].activities, 2u);
  EXPECT_EQ(result[0].cpu_launch_ns, 700u) << "call 3 launched nothing here";
}

TEST(LaunchCosts, OneCallOfManyActivitiesCountsOnce) {
  Costs costs;
  GpuActivity a = Kernel(9, 0, 10);
  a.graph_id = 4;
  costs.Add(a);
  a.name = 5;  // another kernel of the same graph launch
  costs.Add(a);
  costs.AddApiCalls(std::vector<ApiRecord>{Call(9, 0, 40)});
  uint64_t cpu = 0;
  for (const LaunchCost& c : costs.Finish()) cpu += c.cpu_launch_ns;
  EXPECT_EQ(cpu, 40u);
}

TEST(LaunchCosts, NestedIdFindsTheOutermostCallThroughItsLink) {
  Costs costs;
  GpuActivity a = Kernel(12, 100, 200);  // the driver call's id; the record is the runtime's
  a.launch_ns = 50;
  costs.Add(a);
  costs.AddApiCalls(std::vector<ApiRecord>{Call(11, 50, 80)});
  GpuActivity unlinked = Kernel(13, 300, 400, 0);  // no link: nothing to find it by
  unlinked.launch_ns = 50;
  costs.Add(unlinked);
  const std::vector<LaunchCost> result = costs.Finish();
  ASSERT_EQ(result.size(), 2u);
  for (const LaunchCost& c : result) {
    EXPECT_EQ(c.cpu_launch_ns, c.site.join == LaunchJoin::kJoined ? 30u : 0u);
  }
}

TEST(LaunchCosts, NestedIdTakesTheShortestOfRecordsWithTheSameEnter) {
  Costs costs;
  costs.AddApiCalls(std::vector<ApiRecord>{Call(21, 50, 95)});
  GpuActivity a = Kernel(22, 100, 200);  // no API record of its own id
  a.launch_ns = 50;
  costs.Add(a);
  costs.AddApiCalls(std::vector<ApiRecord>{Call(23, 50, 70), Call(24, 50, 90), Call(25, 60, 61)});
  const std::vector<LaunchCost> result = costs.Finish();
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].cpu_launch_ns, 20u);
}

// Many claims made before their API records: most records come later (and are charged
// then), some never come and are found through their enter time at the end, some have
// nothing to be found by. Each call is charged once, whatever happens to the list of
// waiting claims while it grows.
TEST(LaunchCosts, ManyClaimsBeforeTheirRecords) {
  constexpr uint32_t kCalls = 200'000;
  Costs costs;
  uint64_t expected = 0;
  std::vector<ApiRecord> later;
  for (uint32_t i = 1; i <= kCalls; ++i) {
    GpuActivity a = Kernel(i, 10 * i, 10 * i + 5, 1 + i % 3);
    a.launch_ns = 10 * i;
    costs.Add(a);
    if (i % 4 != 0) {
      later.push_back(Call(i, 10 * i, 10 * i + 2));  // its own record, later
      expected += 2;
    } else if (i % 8 == 0) {
      later.push_back(Call(kCalls + i, 10 * i, 10 * i + 3));  // the outer call's record
      expected += 3;
    }  // else: no record at all
    if (later.size() == 1000) {
      costs.AddApiCalls(later);
      later.clear();
    }
  }
  costs.AddApiCalls(later);
  uint64_t cpu = 0, activities = 0;
  for (const LaunchCost& c : costs.Finish()) {
    cpu += c.cpu_launch_ns;
    activities += c.activities;
  }
  EXPECT_EQ(activities, kCalls);
  EXPECT_EQ(cpu, expected);
}

}  // namespace
}  // namespace gpuperf
