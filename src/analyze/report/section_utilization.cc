// GPU utilization: per (process, device), how much of the process's active span the GPU
// was busy, and the longest idle gaps with what the CPU threads were doing meanwhile.
#include <algorithm>
#include <optional>
#include <tuple>

#include "analyze/report/call_reach.h"
#include "analyze/report/report_builder.h"
#include "base/interval_union.h"

namespace gpuperf::report {
namespace {

struct DeviceBusy {
  uint32_t device = 0;
  IntervalUnion busy;  // kernels, copies and sets
  uint64_t kernel_ns = 0;
};

struct ProcessUse {
  std::vector<DeviceBusy> devices;
  // Per thread of the process (ProcessInfo::threads), made when a gap first needs it.
  std::vector<std::optional<CallReach>> reach;

  DeviceBusy& Device(uint32_t device) {
    for (DeviceBusy& d : devices) {
      if (d.device == device) return d;
    }
    devices.push_back(DeviceBusy{device, {}, 0});
    return devices.back();
  }
};

class UtilizationSection final : public ReportSection {
 public:
  explicit UtilizationSection(ReportContext& context) : context_(context) {}

  void OnKernels(std::span<const KernelRecord> records) override {
    for (const KernelRecord& k : records) {
      DeviceBusy& d = Busy(k);
      d.kernel_ns += Duration(k.start_ns, k.end_ns);
    }
  }
  void OnMemcpys(std::span<const MemcpyRecord> records) override {
    for (const MemcpyRecord& m : records) Busy(m);
  }
  void OnMemsets(std::span<const MemsetRecord> records) override {
    for (const MemsetRecord& m : records) Busy(m);
  }
  void Finish(ReportModel& model) override {
    for (auto& [pid, use] : use_) {
      std::sort(use.devices.begin(), use.devices.end(),
                [](const DeviceBusy& a, const DeviceBusy& b) { return a.device < b.device; });
      // GPU work widened its process's span, so the process has one.
      const ProcessInfo* p = context_.processes().Find(pid);
      if (p == nullptr || p->first_ns == kNoTime) continue;
      for (DeviceBusy& d : use.devices) model.utilization.push_back(Row(pid, *p, use, d));
    }
    std::sort(model.utilization.begin(), model.utilization.end(),
              [](const UtilizationRow& a, const UtilizationRow& b) {
                return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
              });
  }

 private:
  template <class GpuRecord>
  DeviceBusy& Busy(const GpuRecord& r) {
    DeviceBusy& d = use_[r.pid].Device(r.device_id);
    d.busy.Add(r.start_ns, r.end_ns);
    return d;
  }

  UtilizationRow Row(uint32_t pid, const ProcessInfo& p, ProcessUse& use, DeviceBusy& d) {
    const ReportOptions& options = context_.options();
    UtilizationRow row;
    row.pid = pid;
    row.device = d.device;
    row.span_ns = p.last_ns - p.first_ns;
    row.kernel_ns = d.kernel_ns;
    row.busy_ns = d.busy.covered_ns();
    std::vector<IdleGap> gaps;
    uint64_t cursor = p.first_ns;
    auto consider = [&](uint64_t begin, uint64_t end) {
      if (end <= begin || end - begin < options.gap_threshold_ns) return;
      ++row.gaps;
      row.gap_ns += end - begin;
      gaps.push_back({begin, end - begin, {}});
    };
    for (const Interval& iv : d.busy.intervals()) {
      consider(cursor, iv.begin);
      cursor = std::max(cursor, iv.end);
    }
    consider(cursor, p.last_ns);
    std::stable_sort(gaps.begin(), gaps.end(), [](const IdleGap& a, const IdleGap& b) {
      return a.duration_ns > b.duration_ns;
    });
    if (gaps.size() > options.max_gaps) gaps.resize(options.max_gaps);
    for (IdleGap& g : gaps) {
      g.cpu = CpuDuring(p, use, g.at_ns, g.at_ns + g.duration_ns);
      g.at_ns -= context_.origin();
    }
    row.longest_gaps = std::move(gaps);
    return row;
  }

  // The API calls of each thread that overlap [begin, end), longest first (at most 3).
  std::vector<CpuActivity> CpuDuring(const ProcessInfo& p, ProcessUse& use, uint64_t begin,
                                     uint64_t end) {
    std::vector<CpuActivity> out;
    use.reach.resize(p.threads.size());
    for (size_t t = 0; t < p.threads.size(); ++t) {
      const ThreadCalls* thread = p.threads[t].get();
      const auto& calls = thread->calls;
      if (calls.empty()) continue;
      if (!use.reach[t]) use.reach[t].emplace(calls);
      std::vector<std::pair<StringId, uint64_t>> by_name;
      use.reach[t]->ForEachOverlapping(begin, end, [&](size_t i) {
        const ApiCall& c = calls[i];
        // A call nested in an enclosing call of the same thread (a driver call inside a
        // runtime call) is part of the enclosing one: count only the outer call.
        bool nested = false;
        for (size_t j = i; j-- > 0 && i - j <= 4;) {
          if (calls[j].start <= c.start && calls[j].end >= c.end) {
            nested = true;
            break;
          }
        }
        if (nested) return;
        const uint64_t overlap = std::min(c.end, end) - std::max(c.start, begin);
        auto it = std::find_if(by_name.begin(), by_name.end(),
                               [&](const auto& e) { return e.first == c.name; });
        if (it == by_name.end()) {
          by_name.push_back({c.name, overlap});
        } else {
          it->second += overlap;
        }
      });
      for (auto [name, ns] : by_name) out.push_back({thread->tid, context_.Str(name), ns});
    }
    std::sort(out.begin(), out.end(), [](const CpuActivity& a, const CpuActivity& b) {
      return a.overlap_ns != b.overlap_ns ? a.overlap_ns > b.overlap_ns
                                          : std::tie(a.tid, a.api) < std::tie(b.tid, b.api);
    });
    if (out.size() > 3) out.resize(3);
    return out;
  }

  ReportContext& context_;
  PerProcess<ProcessUse> use_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeUtilizationSection(ReportContext& context) {
  return std::make_unique<UtilizationSection>(context);
}

}  // namespace gpuperf::report
