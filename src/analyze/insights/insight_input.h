// What the insight rules read: every process's GPU work per device in time order, its
// memory events, the launch links and API calls of the trace, joined so that a rule asks
// "which call launched this, how long did it take, from which stack" in one lookup (the
// links are the Correlator's: the one (pid, correlation id) join, analyze/join). Built
// by the report's insights section (insights_section.cc) while the report streams the
// trace, so it sees what the report's filters let through.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analyze/join/correlation.h"
#include "analyze/join/correlation_table.h"
#include "analyze/report/report_builder.h"
#include "analyze/report/report_model.h"
#include "gpuperf/records.h"

namespace gpuperf::insights {

// One kernel, copy or set.
struct GpuWork {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t bytes = 0;  // copies and sets
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
  uint32_t runtime_correlation_id = 0;  // copies: the runtime call's id, when CUPTI gave one
  uint32_t graph_id = 0;
  StringId name = 0;  // kernels: the mangled name
  GpuActivityKind kind = GpuActivityKind::kKernel;
  MemcpyKind copy_kind = MemcpyKind::kUnknown;
  // Copies between host and device: the memory kind of the host side.
  MemoryKind host_kind = MemoryKind::kUnknown;

  uint64_t duration() const { return end > start ? end - start : 0; }
};

struct DeviceWork {
  uint32_t device = 0;
  std::vector<GpuWork> work;  // sorted by start
};

// A stretch of CUDA's own one-time work: loading modules and functions, JIT compiling
// (CUPTI overhead records).
struct Interval {
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct ProcessWork {
  uint32_t pid = 0;
  std::vector<DeviceWork> devices;   // by device id
  std::vector<MemoryRecord> memory;  // allocations and frees, by time
  std::vector<Interval> loading;     // by begin
};

// A stretch during which a device ran nothing, between two pieces of its work.
struct Gap {
  uint64_t begin = 0;
  uint64_t end = 0;
  size_t next = 0;  // index in DeviceWork::work of the work that ended it
  uint64_t duration() const { return end - begin; }
};

class InsightInput {
 public:
  InsightInput(report::ReportContext& context, const ReportModel& model,
               std::vector<ProcessWork> processes, const Correlator& links);

  const std::vector<ProcessWork>& processes() const { return processes_; }
  // The rest of the report (kernel table with occupancy, devices), complete.
  const ReportModel& model() const { return model_; }

  const std::string& Str(StringId id) const { return context_.Str(id); }
  uint64_t SinceOrigin(uint64_t t) const { return context_.SinceOrigin(t); }

  // The link of (pid, correlation id), or nullptr.
  const LaunchLink* Link(uint32_t pid, uint32_t correlation_id) const;
  // A stack as findings show it, innermost first, "function (file:line)" with short C++
  // names: the innermost frames, where a run of frames without symbols in one library
  // counts as one line; in a stack with Python frames, the first frames and then the
  // innermost Python frames (the user's code). Empty when the trace holds no stack.
  std::vector<std::string> Stack(StackId stack, uint32_t tid);
  // Stacks that show the same lines (they differ only beyond what is shown) are one
  // place to the rules: group findings by this id, 0 for "no stack".
  uint32_t Place(StackId stack, uint32_t tid);
  uint32_t PlaceOf(const LaunchLink* link) { return link ? Place(link->stack_id, link->tid) : 0; }
  const std::vector<std::string>& PlaceStack(uint32_t place) const { return places_[place]; }
  // The API call that made a correlation id: its own record, or (for work carrying a
  // nested call's id) the outermost call its link names. nullptr when the trace has none.
  const report::ApiCall* ApiCall(uint32_t pid, uint32_t correlation_id) const;
  // The API calls of a process's threads, each sorted by start.
  std::span<const std::unique_ptr<report::ThreadCalls>> Threads(uint32_t pid) const;

  // The idle gaps of a device of at least `min_ns`, between its first and last work.
  static std::vector<Gap> Gaps(const DeviceWork& device, uint64_t min_ns);

 private:
  struct CallRef {
    uint32_t thread = 0;  // index + 1 into the process's threads; 0 none
    uint32_t index = 0;   // into its calls
  };
  const report::ApiCall* Resolve(uint32_t pid, const CallRef& ref) const;

  report::ReportContext& context_;
  const ReportModel& model_;
  std::vector<ProcessWork> processes_;
  const Correlator& links_;
  CorrelationTable<CallRef> calls_;
  std::vector<std::vector<std::string>> places_{1};            // [0]: no stack
  std::map<std::vector<std::string>, uint32_t> place_index_;   // lines -> place
  std::map<std::pair<StackId, uint32_t>, uint32_t> place_of_;  // (stack, tid) -> place
};

}  // namespace gpuperf::insights
