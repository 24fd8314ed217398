// The rules about time on the GPU's critical path (gpu_idle_gaps, sync_stalls,
// launch_bound), each on a scripted program that shows the problem and one that does not.
#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "analyze/insights/rules.h"
#include "support/insight_scenario.h"

namespace gpuperf {
namespace {

using testing::EvidenceValue;
using testing::InsightScenario;

// Three steps of 100 µs of GPU work, each followed by `cpu_us` of CPU work outside CUDA
// before the next step's launch.
InsightScenario StepsWithCpuWork(double cpu_us) {
  InsightScenario s;
  const StackId next = s.Stack({"main", "train", "load_batch"});
  double t = 0;
  for (int step = 0; step < 4; ++step) {
    s.Launch(next, "_Z4stepv", t, 5, t + 6, 100);
    t += 106 + cpu_us;
  }
  return s;
}

TEST(GpuIdleGaps, CpuWorkOutsideCudaIsNamedWithTheLaunchThatEndedIt) {
  const std::vector<Insight> found = StepsWithCpuWork(2000).Insights("gpu_idle_gaps");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  // Gaps: each step's kernel ends at t+106; the next starts at t+106+2000+6.
  EXPECT_EQ(EvidenceValue(in, "gaps"), 3);
  EXPECT_EQ(in.at_stake_ns, 3u * 2006'000);
  EXPECT_EQ(in.stake, StakeKind::kGpuIdle);
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "load_batch (app.cc:10)");
  EXPECT_NE(in.finding.find("outside CUDA"), std::string::npos) << in.finding;
  EXPECT_EQ(in.pid, InsightScenario::kPid);
  EXPECT_EQ(in.device, 0u);
}

TEST(GpuIdleGaps, ShortGapsAreNotIdling) {
  // 50 µs between steps: launch latency, below the 100 µs a gap needs.
  EXPECT_TRUE(StepsWithCpuWork(44).Insights("gpu_idle_gaps").empty());
}

TEST(GpuIdleGaps, ACallCoveringTheGapIsTheCause) {
  InsightScenario s;
  const StackId launch = s.Stack({"main", "step"});
  const StackId alloc = s.Stack({"main", "step", "make_buffer"});
  s.Launch(launch, "k", 0, 5, 6, 100);
  s.Call("cudaMalloc", 200, 4000, alloc);  // 4 ms of a 4.2 ms gap (10 ms would be start-up)
  s.Launch(launch, "k", 4300, 5, 4306, 100);
  const std::vector<Insight> found = s.Insights("gpu_idle_gaps");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].finding.find("allocating or freeing memory in cudaMalloc from make_buffer"),
            std::string::npos)
      << found[0].finding;
  ASSERT_FALSE(found[0].stack.empty());
  EXPECT_EQ(found[0].stack[0], "make_buffer (app.cc:10)");
}

TEST(GpuIdleGaps, LoadingGpuCodeIsStartUpWork) {
  InsightScenario s;
  const StackId launch = s.Stack({"main", "step"});
  s.Launch(launch, "k", 0, 5, 6, 100);
  s.Call("cuLibraryLoadData", 200, 1500);
  s.Launch(launch, "k2", 3900, 5, 3906, 100);  // 1.5 ms of a 3.8 ms gap: start-up
  const std::vector<Insight> found = s.Insights("gpu_idle_gaps");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].finding.find("one-time start-up work (cuLibraryLoadData 1.50 ms)"),
            std::string::npos)
      << found[0].finding;
}

// Ten steps: a 500 µs kernel, the CPU synchronizing on it, then `after_us` of CPU work
// before the next launch.
InsightScenario SyncEveryStep(double after_us) {
  InsightScenario s;
  const StackId step = s.Stack({"main", "train_step"});
  const StackId sync = s.Stack({"main", "train_step", "read_loss"});
  double t = 0;
  for (int i = 0; i < 10; ++i) {
    s.Launch(step, "k", t, 5, t + 6, 500);
    s.Call("cudaStreamSynchronize", t + 10, 500, sync);  // returns when the kernel is done
    t += 510 + after_us;
  }
  return s;
}

TEST(SyncStalls, GpuIdleAfterEachSynchronizationIsChargedToIt) {
  const std::vector<Insight> found = SyncEveryStep(300).Insights("sync_stalls");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  // Kernel i ends at t+506, the next starts at t+510+300+6: 310 µs each, 9 times.
  EXPECT_EQ(EvidenceValue(in, "stalls"), 9);
  EXPECT_EQ(in.at_stake_ns, 9u * 310'000);
  EXPECT_EQ(EvidenceValue(in, "calls"), 10);
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "read_loss (app.cc:10)");
  // The gaps are the synchronization's, not idle gaps of unknown cause.
  EXPECT_TRUE(SyncEveryStep(300).Insights("gpu_idle_gaps").empty());
}

TEST(SyncStalls, QuickRelaunchAfterTheSyncIsNotAStall) {
  EXPECT_TRUE(SyncEveryStep(2).Insights("sync_stalls").empty());  // 12 µs gaps, 108 µs in all
}

TEST(SyncStalls, ACallMadeWhileTheGpuWasIdleWaitedForNothing) {
  // The synchronize call starts after the kernel finished: the CPU work before it, not
  // the synchronization, kept the GPU idle.
  InsightScenario s;
  const StackId step = s.Stack({"main", "step"});
  double t = 0;
  for (int i = 0; i < 10; ++i) {
    s.Launch(step, "k", t, 5, t + 6, 100);
    s.Call("cudaStreamSynchronize", t + 400, 3);
    t += 1000;
  }
  EXPECT_TRUE(s.Insights("sync_stalls").empty());
  EXPECT_EQ(s.Insights("gpu_idle_gaps").size(), 1u);
}

// `kernels` launches, one every `call_us`, each kernel running `kernel_us`.
InsightScenario BackToBack(int kernels, double call_us, double kernel_us) {
  InsightScenario s;
  const StackId small = s.Stack({"main", "forward", "elementwise_op"});
  for (int i = 0; i < kernels; ++i) {
    const double t = i * call_us;
    s.Launch(small, "_Z3addPf", t, call_us, t + call_us, kernel_us);
  }
  return s;
}

TEST(LaunchBound, KernelsShorterThanTheirLaunchesLeaveTheGpuWaiting) {
  const std::vector<Insight> found = BackToBack(300, 10, 2).Insights("launch_bound");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(EvidenceValue(in, "kernels"), 300);
  EXPECT_EQ(EvidenceValue(in, "median_kernel"), 2000);
  EXPECT_EQ(EvidenceValue(in, "median_launch_call"), 10000);
  // The phase runs from the first kernel's start to the last one's end; 2 µs in 10 busy.
  EXPECT_EQ(in.at_stake_ns, 299u * 10'000 + 2'000 - 300u * 2'000);
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "elementwise_op (app.cc:10)");
  EXPECT_NE(in.finding.find("most often add"), std::string::npos) << in.finding;
}

TEST(LaunchBound, KernelsLongerThanTheirLaunchesKeepTheGpuBusy) {
  EXPECT_TRUE(BackToBack(300, 10, 12).Insights("launch_bound").empty());
}

TEST(LaunchBound, AFewShortKernelsAreNotAPhase) {
  EXPECT_TRUE(BackToBack(15, 10, 2).Insights("launch_bound").empty());
}

TEST(Insights, RankedByTimeAtStakeWithEveryRuleListedOnce) {
  InsightScenario s;
  const StackId step = s.Stack({"main", "step"});
  s.Launch(step, "k", 0, 5, 6, 100);
  s.Launch(step, "k", 1106, 5, 1112, 100);  // 1 ms gap
  s.Launch(step, "k", 6212, 5, 6218, 100);  // 5 ms gap: 6 ms outside CUDA in all
  s.Call("cudaMalloc", 6400, 4000, step);
  s.Launch(step, "k", 10500, 5, 10506, 100);  // a 4.2 ms gap, in cudaMalloc
  const std::vector<Insight> found = s.Insights();
  ASSERT_GE(found.size(), 2u);
  for (size_t i = 1; i < found.size(); ++i) {
    EXPECT_GE(found[i - 1].at_stake_ns, found[i].at_stake_ns);
  }
  std::set<std::string_view> ids;
  for (const insights::Rule& rule : insights::ProcessRules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id;
  }
  for (const Insight& in : found) EXPECT_TRUE(ids.count(in.rule)) << in.rule;
  for (const insights::RankRule& rule : insights::RankRules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id;  // one id space for both lists
  }
}

}  // namespace
}  // namespace gpuperf
