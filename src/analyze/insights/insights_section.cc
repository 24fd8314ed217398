// The report section behind `gpuperf report --insights`: keeps what the rules read while
// the report streams the trace (GPU work per device, memory events, launch links), then
// runs the rules once every other section has filled its part of the model.
#include "analyze/insights/insights_section.h"

#include <algorithm>

#include "analyze/insights/insight_input.h"
#include "analyze/insights/rules.h"

namespace gpuperf::report {
namespace {

using insights::DeviceWork;
using insights::GpuWork;
using insights::ProcessWork;

class InsightsSection final : public ReportSection {
 public:
  explicit InsightsSection(ReportContext& context) : context_(context) {}

  void OnLaunchLinks(std::span<const LaunchLinkRecord> records) override {
    links_.AddLinks(records);
  }
  void OnKernels(std::span<const KernelRecord> records) override {
    for (const KernelRecord& k : records) {
      GpuWork w = Work(k);
      w.name = k.name;
      w.graph_id = k.graph_id;
      Device(k.pid, k.device_id).push_back(w);
    }
  }
  void OnMemcpys(std::span<const MemcpyRecord> records) override {
    for (const MemcpyRecord& m : records) {
      GpuWork w = Work(m);
      w.kind = GpuActivityKind::kMemcpy;
      w.bytes = m.bytes;
      w.copy_kind = m.kind;
      w.runtime_correlation_id = m.runtime_correlation_id;
      w.graph_id = m.graph_id;
      w.host_kind = m.kind == MemcpyKind::kHtoD   ? m.src_kind
                    : m.kind == MemcpyKind::kDtoH ? m.dst_kind
                                                  : MemoryKind::kUnknown;
      Device(m.pid, m.device_id).push_back(w);
    }
  }
  void OnMemsets(std::span<const MemsetRecord> records) override {
    for (const MemsetRecord& m : records) {
      GpuWork w = Work(m);
      w.kind = GpuActivityKind::kMemset;
      w.bytes = m.bytes;
      w.graph_id = m.graph_id;
      Device(m.pid, m.device_id).push_back(w);
    }
  }
  void OnMemory(std::span<const MemoryRecord> records) override {
    for (const MemoryRecord& m : records) processes_[m.pid].memory.push_back(m);
  }
  void OnOverheads(std::span<const OverheadRecord> records) override {
    for (const OverheadRecord& o : records) {
      if (o.kind == OverheadKind::kModuleLoading || o.kind == OverheadKind::kLazyFunctionLoading ||
          o.kind == OverheadKind::kDriverCompiler) {
        processes_[o.pid].loading.push_back({o.start_ns, o.end_ns});
      }
    }
  }

  void Finish(ReportModel& model) override {
    std::vector<ProcessWork> processes;
    for (auto& [pid, process] : processes_) {
      process.pid = pid;
      std::sort(process.devices.begin(), process.devices.end(),
                [](const DeviceWork& a, const DeviceWork& b) { return a.device < b.device; });
      for (DeviceWork& d : process.devices) {
        std::stable_sort(d.work.begin(), d.work.end(),
                         [](const GpuWork& a, const GpuWork& b) { return a.start < b.start; });
      }
      std::sort(process.loading.begin(), process.loading.end(),
                [](const insights::Interval& a, const insights::Interval& b) {
                  return a.begin < b.begin;
                });
      std::stable_sort(process.memory.begin(), process.memory.end(),
                       [](const MemoryRecord& a, const MemoryRecord& b) {
                         return a.timestamp_ns < b.timestamp_ns;
                       });
      processes.push_back(std::move(process));
    }
    insights::InsightInput input(context_, model, std::move(processes), links_);
    // The rules across ranks get the ranks the ranks section found (it finishes first);
    // their figures (overlap, straggler, clock alignment) are in model.ranks.
    std::vector<insights::RankInfo> ranks;
    for (const RankRow& row : model.ranks.ranks) {
      if (row.rank < 0) continue;
      ranks.push_back({row.pid, static_cast<uint32_t>(row.rank),
                       static_cast<uint32_t>(std::max(row.local_rank, 0)),
                       static_cast<uint32_t>(std::max(row.world_size, 0))});
    }
    model.insights = insights::RunInsights(input, ranks);
    model.insights_run = true;
  }

 private:
  template <class Record>
  static GpuWork Work(const Record& r) {
    GpuWork w;
    w.start = r.start_ns;
    w.end = r.end_ns;
    w.stream = r.stream_id;
    w.correlation_id = r.correlation_id;
    return w;
  }
  std::vector<GpuWork>& Device(uint32_t pid, uint32_t device) {
    ProcessWork& p = processes_[pid];
    for (DeviceWork& d : p.devices) {
      if (d.device == device) return d.work;
    }
    p.devices.push_back({device, {}});
    return p.devices.back().work;
  }

  ReportContext& context_;
  PerProcess<ProcessWork> processes_;
  // Every launch link of the selected processes (the report's own Correlator keeps only
  // those of calls that wait or allocate): the rules ask it which call launched a piece
  // of work. No GPU record goes through it.
  Correlator links_{[](const GpuActivity&) {}};
};

}  // namespace

std::unique_ptr<ReportSection> MakeInsightsSection(ReportContext& context) {
  if (!context.options().insights) return nullptr;
  return std::make_unique<InsightsSection>(context);
}

}  // namespace gpuperf::report
