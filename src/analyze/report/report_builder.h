// How `gpuperf report` is built: one coordinator, one section per part of the report.
//
// The coordinator (report_builder.cc) reads the trace once, applies the report's filters,
// keeps what several sections read (ReportContext: names, stacks, the links of API calls,
// each process's span, counters and API calls per thread) and hands every record kind to
// the sections, in cache-sized slices. Each section (section_<name>.cc) keeps only what
// it needs and fills its part of the ReportModel at the end. A new section is a new file
// with a ReportSection and its Make function, declared at the end of this header and
// listed once in report_builder.cc. Sections of the rooms above the report (the insight
// rules) are handed to BuildReport and run after these.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/join/correlation.h"
#include "analyze/join/data_loss.h"
#include "analyze/ranks/clock_alignment.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/report/report_model.h"
#include "analyze/symbols/symbol_table.h"
#include "gpuperf/records.h"
#include "gpuperf/stats.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::report {

inline constexpr uint64_t kNoTime = std::numeric_limits<uint64_t>::max();

inline uint64_t Duration(uint64_t start, uint64_t end) {
  return end > start ? end - start : 0;
}

inline void AddDuration(DurationStats& s, uint64_t ns) {
  if (s.count == 0 || ns < s.min_ns) s.min_ns = ns;
  if (ns > s.max_ns) s.max_ns = ns;
  ++s.count;
  s.total_ns += ns;
}

// Which StringIds match a regex (in the name or its demangled form), decided once per id.
class NameMatcher {
 public:
  explicit NameMatcher(const std::string& pattern);
  bool active() const { return active_; }
  bool Matches(StringId id, const std::vector<std::string>& strings);

 private:
  bool active_;
  std::regex regex_;
  std::vector<int8_t> cache_;
};

// Values kept per process, visited in pid order; fast for runs of one pid.
template <class T>
class PerProcess {
 public:
  T& operator[](uint32_t pid) {
    if (last_ == nullptr || last_pid_ != pid) {
      last_ = &by_pid_[pid];
      last_pid_ = pid;
    }
    return *last_;
  }
  const T* Find(uint32_t pid) const {
    if (last_ != nullptr && last_pid_ == pid) return last_;
    auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? nullptr : &it->second;
  }
  auto begin() { return by_pid_.begin(); }
  auto end() { return by_pid_.end(); }
  auto begin() const { return by_pid_.begin(); }
  auto end() const { return by_pid_.end(); }

 private:
  std::map<uint32_t, T> by_pid_;
  uint32_t last_pid_ = 0;
  T* last_ = nullptr;
};

// Rows of a table keyed by a name's StringId, in order of first use. Row has a `name`.
template <class Row>
class RowsByName {
 public:
  Row& operator[](StringId name) {
    if (name >= slot_.size()) slot_.resize(name + 1, -1);
    int32_t& slot = slot_[name];
    if (slot < 0) {
      slot = static_cast<int32_t>(rows_.size());
      rows_.emplace_back();
      rows_.back().name = name;
    }
    return rows_[slot];
  }
  std::vector<Row>& rows() { return rows_; }

 private:
  std::vector<int32_t> slot_;  // by StringId: index in rows_, -1 none yet
  std::vector<Row> rows_;
};

// An API call, kept per thread for the sections that place CPU work in time (idle gaps,
// NVTX ranges).
struct ApiCall {
  uint64_t start = 0;
  uint64_t end = 0;
  StringId name = 0;
  uint32_t correlation_id = 0;
};

struct ThreadCalls {
  uint32_t tid = 0;
  // Sorted by start once the trace is read. In blocks, not one array: a vector's doubling
  // would hold one and a half times a long thread's calls, twice while it moves them.
  std::deque<ApiCall> calls;
};

// What the report knows about a process beyond its records.
struct ProcessInfo {
  uint64_t first_ns = kNoTime;  // its CUDA activity span: API calls and GPU work
  uint64_t last_ns = 0;
  std::optional<ProcessRecord> process;
  StatCounters stats;
  std::vector<std::unique_ptr<ThreadCalls>> threads;  // in order of their first call

  void Touch(uint64_t start, uint64_t end) {
    first_ns = std::min(first_ns, start);
    last_ns = std::max(last_ns, end);
  }
  ThreadCalls& Thread(uint32_t tid);

 private:
  std::unordered_map<uint32_t, ThreadCalls*> thread_by_tid_;
  ThreadCalls* last_thread_ = nullptr;
};

// What every section may read. Filled by the coordinator while the trace streams; origin
// and read report are final once the sections' Finish runs.
class ReportContext {
 public:
  explicit ReportContext(const ReportOptions& options);

  const ReportOptions& options() const { return options_; }
  const std::string& Str(StringId id) const {
    static const std::string kEmpty;
    return id < strings_.size() ? strings_[id] : kEmpty;
  }
  // The innermost options().stack_frames frames of a stack launched by thread `tid`,
  // "function (file:line)" (Python frames merged in: SymbolTable::ResolveStack).
  std::vector<std::string> StackFrames(StackId id, uint32_t tid);
  // Every frame of that stack, outermost first (empty for an unknown stack); the views
  // stay valid as long as the context.
  void ResolveStack(StackId id, uint32_t tid, std::vector<Frame>& out);
  const std::vector<std::string>& strings() const { return strings_; }
  std::string ThreadName(uint32_t pid, uint32_t tid) const;
  // The link of an API call (its stack, thread, enter time), when the trace has one. The
  // report keeps the links of calls that wait or allocate, not of those that launch
  // kernels, copies or sets (see LinkApiCalls).
  const LaunchLink* FindLink(uint32_t pid, uint32_t correlation_id) const {
    return correlator_.FindLink(pid, correlation_id);
  }
  // Makes every API call of `pid` the report kept a link (without a stack) where the trace
  // gave none, so that FindLink tells the thread and time of any call, launches included.
  // Costs the links' memory for the process; once per process.
  void LinkApiCalls(uint32_t pid);
  bool KernelSelected(StringId name) {
    return !kernel_matcher_.active() || kernel_matcher_.Matches(name, strings_);
  }
  bool ApiSelected(StringId name) {
    return !api_matcher_.active() || api_matcher_.Matches(name, strings_);
  }
  bool InTimeRange(uint64_t t) const { return t >= time_begin_ && t < time_end_; }
  // Whether the trace may hold NVTX records (its chunk headers say so): a section that
  // keeps what NVTX ranges need keeps nothing when there are none.
  bool nvtx_in_trace() const { return nvtx_in_trace_; }

  uint64_t origin() const { return origin_; }
  uint64_t SinceOrigin(uint64_t t) const { return t >= origin_ ? t - origin_ : 0; }
  // In pid order; threads' calls sorted by start.
  const PerProcess<ProcessInfo>& processes() const { return processes_; }
  const std::vector<DeviceRecord>& devices() const { return devices_; }
  const ReadReport& read_report() const { return read_report_; }
  // The selected processes' loss counters and process records (analyze/data_loss.h).
  const RecordingLossCollector& recording_loss() const { return recording_loss_; }
  // Who is who (ranks, hosts, power readings as recorded) and how the hosts' clocks were
  // aligned; every record the sections see is already on the aligned clock.
  const RankScan& rank_scan() const { return *rank_scan_; }
  const ClockAlignment& clock_alignment() const { return *clock_alignment_; }
  // The ranks of the whole job when analysed before this reading (nullptr: not).
  const RanksModel* job_ranks() const { return job_ranks_ ? &*job_ranks_ : nullptr; }

 private:
  friend class ReportBuilder;

  const ReportOptions& options_;
  NameMatcher kernel_matcher_;
  NameMatcher api_matcher_;
  uint64_t time_begin_ = 0;
  uint64_t time_end_ = kNoTime;
  uint64_t origin_ = kNoTime;
  bool nvtx_in_trace_ = true;
  std::vector<std::string> strings_;
  std::vector<StackRecord> stacks_;
  SymbolTable symbols_;
  std::unordered_map<uint64_t, StringId> thread_names_;  // (pid << 32 | tid)
  Correlator correlator_;  // the links of API calls: FindLink, LinkApiCalls
  PerProcess<ProcessInfo> processes_;
  std::vector<uint32_t> api_calls_linked_;  // pids LinkApiCalls has done
  std::vector<DeviceRecord> devices_;
  ReadReport read_report_;
  RecordingLossCollector recording_loss_;
  // Shared: the reports of a job's ranks are built at once from one scan and alignment.
  std::shared_ptr<const RankScan> rank_scan_;
  std::shared_ptr<const ClockAlignment> clock_alignment_;
  std::optional<RanksModel> job_ranks_;
};

// One part of the report. Every On* call brings records that passed the report's
// filters (process, device, stream, time range, NVTX range; see ReportOptions); the
// kernel and API name filters are the sections' to apply (ReportContext::KernelSelected,
// ApiSelected), since GPU utilization counts every kernel.
class ReportSection {
 public:
  virtual ~ReportSection() = default;
  virtual void OnKernels(std::span<const KernelRecord> records) {}
  virtual void OnMemcpys(std::span<const MemcpyRecord> records) {}
  virtual void OnMemsets(std::span<const MemsetRecord> records) {}
  virtual void OnApiCalls(std::span<const ApiRecord> records) {}
  virtual void OnSyncs(std::span<const SyncRecord> records) {}
  virtual void OnMemory(std::span<const MemoryRecord> records) {}
  virtual void OnNvtxRanges(std::span<const NvtxRecord> records) {}
  virtual void OnOverheads(std::span<const OverheadRecord> records) {}
  virtual void OnCpuSamples(std::span<const CpuSampleRecord> records) {}
  virtual void OnOffCpu(std::span<const OffCpuRecord> records) {}
  // Every launch link of the selected processes (unfiltered by time: a link is where a
  // record's stack is found, whenever the record falls).
  virtual void OnLaunchLinks(std::span<const LaunchLinkRecord> records) {}
  virtual void OnMetricRanges(std::span<const MetricRangeRecord> records) {}
  virtual void OnMetricValues(std::span<const MetricValueRecord> records) {}
  // NCCL's profiler plugin's collectives of the selected processes and time range (the
  // ranks section joins them to kernels).
  virtual void OnNcclCollectives(std::span<const NcclCollectiveRecord> records) {}
  virtual void OnPcSample(const PcSampleRecord& sample) {}
  virtual void OnSassLine(const SassLineRecord& line) {}
  // After the whole trace, in the order the sections are listed in report_builder.cc.
  virtual void Finish(ReportModel& model) = 0;
};

std::unique_ptr<ReportSection> MakeProcessesSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeKernelsSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeApiSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeCopiesSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeSyncSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeMemorySection(ReportContext& context);
std::unique_ptr<ReportSection> MakeUtilizationSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeNvtxSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeOverheadSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeCpuSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeLossSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeRanksSection(ReportContext& context);
std::unique_ptr<ReportSection> MakeEnergySection(ReportContext& context);
std::unique_ptr<ReportSection> MakeHardwareSection(ReportContext& context);

}  // namespace gpuperf::report
