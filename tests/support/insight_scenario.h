// Small scripted programs for the insight rules' tests: one process, one thread, one
// GPU, whose API calls, launches, copies and allocations are placed on a timeline in
// microseconds, so a test reads like the situation it describes. The trace is written to
// a .gpt file and read back by the real report (BuildReport on the file), as
// `gpuperf report --insights` would.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/report/insight.h"
#include "support/test_trace.h"

namespace gpuperf::testing {

class InsightScenario {
 public:
  static constexpr uint32_t kPid = 77;
  static constexpr uint32_t kTid = 78;

  InsightScenario();

  // An API call on the thread, [start_us, start_us + us); returns its correlation id.
  uint32_t Call(std::string_view api, double start_us, double us, StackId stack = 0);
  // cudaLaunchKernel at call_us taking call_duration_us, running `kernel` from kernel_us
  // for kernel_duration_us, launched from `stack`.
  KernelRecord& Launch(StackId stack, std::string_view kernel, double call_us,
                       double call_duration_us, double kernel_us, double kernel_duration_us);
  // A copy made by `api` (its call as long as the copy, starting 1 µs earlier).
  MemcpyRecord& Copy(StackId stack, MemcpyKind kind, MemoryKind host, uint64_t bytes,
                     double start_us, double us, std::string_view api = "cudaMemcpyAsync");
  // cudaMalloc (or cudaFree) of `bytes` at `address`, at_us, from `stack`.
  void Allocate(StackId stack, uint64_t address, uint64_t bytes, double at_us);
  void Free(uint64_t address, double at_us);

  StackId Stack(const std::vector<std::string>& frames_outermost_first) {
    return t_.Stack(kPid, frames_outermost_first);
  }
  TestTrace& trace() { return t_; }

  // The report's insights on this trace, written to a file and read back.
  std::vector<Insight> Insights();
  // Those of one rule.
  std::vector<Insight> Insights(std::string_view rule);

 private:
  static uint64_t Ns(double us) { return static_cast<uint64_t>(us * 1000 + 0.5); }
  uint32_t next_correlation_ = 1;
  TestTrace t_;
};

// The value of a finding's evidence named `name` (fails the test when it has none).
double EvidenceValue(const Insight& insight, std::string_view name);

}  // namespace gpuperf::testing
