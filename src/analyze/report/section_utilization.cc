// GPU utilization: per (process, device), how much of the process's active span the GPU
// was busy, and the longest idle gaps with what the CPU threads were doing meanwhile.
#include <algorithm>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "analyze/interval_union.h"
#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

// An API call, kept per thread to say what the CPU did during an idle gap.
struct ApiCall {
  uint64_t start = 0;
  uint64_t end = 0;
  StringId name = 0;
};

struct ThreadCalls {
  uint32_t tid = 0;
  std::vector<ApiCall> calls;
  std::vector<uint64_t> max_end_prefix;  // built on demand: max end of calls[0..i]
};

struct DeviceBusy {
  uint32_t device = 0;
  IntervalUnion busy;  // kernels, copies and sets
  uint64_t kernel_ns = 0;
};

struct ProcessUse {
  std::vector<DeviceBusy> devices;
  std::vector<std::unique_ptr<ThreadCalls>> threads;  // in order of first call
  std::unordered_map<uint32_t, ThreadCalls*> thread_by_tid;

  DeviceBusy& Device(uint32_t device) {
    for (DeviceBusy& d : devices) {
      if (d.device == device) return d;
    }
    devices.push_back(DeviceBusy{device, {}, 0});
    return devices.back();
  }
  ThreadCalls& Thread(uint32_t tid) {
    auto it = thread_by_tid.find(tid);
    if (it != thread_by_tid.end()) return *it->second;
    threads.push_back(std::make_unique<ThreadCalls>());
    threads.back()->tid = tid;
    thread_by_tid.emplace(tid, threads.back().get());
    return *threads.back();
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
  void OnApiCalls(std::span<const ApiRecord> records) override {
    ThreadCalls* thread = nullptr;
    uint32_t pid = 0;
    for (const ApiRecord& a : records) {
      if (thread == nullptr || pid != a.pid || thread->tid != a.tid) {
        pid = a.pid;
        thread = &use_[a.pid].Thread(a.tid);
      }
      thread->calls.push_back({a.start_ns, a.end_ns, a.name});
    }
  }

  void Finish(ReportModel& model) override {
    for (auto& [pid, use] : use_) {
      for (auto& thread : use.threads) {
        auto by_start = [](const ApiCall& a, const ApiCall& b) { return a.start < b.start; };
        if (!std::is_sorted(thread->calls.begin(), thread->calls.end(), by_start)) {
          std::stable_sort(thread->calls.begin(), thread->calls.end(), by_start);
        }
      }
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
      g.cpu = CpuDuring(use, g.at_ns, g.at_ns + g.duration_ns);
      g.at_ns -= context_.origin();
    }
    row.longest_gaps = std::move(gaps);
    return row;
  }

  // The API calls of each thread that overlap [begin, end), longest first (at most 3).
  std::vector<CpuActivity> CpuDuring(ProcessUse& use, uint64_t begin, uint64_t end) {
    std::vector<CpuActivity> out;
    for (auto& thread : use.threads) {
      auto& calls = thread->calls;
      if (calls.empty()) continue;
      if (thread->max_end_prefix.size() != calls.size()) {
        thread->max_end_prefix.resize(calls.size());
        uint64_t m = 0;
        for (size_t i = 0; i < calls.size(); ++i)
          thread->max_end_prefix[i] = m = std::max(m, calls[i].end);
      }
      // Calls are sorted by start; walk back from the first one starting at or after
      // `end` while some earlier call may still reach into the gap.
      size_t i = std::lower_bound(calls.begin(), calls.end(), end,
                                  [](const ApiCall& c, uint64_t v) { return c.start < v; }) -
                 calls.begin();
      std::vector<std::pair<StringId, uint64_t>> by_name;
      while (i > 0 && thread->max_end_prefix[i - 1] > begin) {
        --i;
        const ApiCall& c = calls[i];
        if (c.end <= begin) continue;
        // A call nested in an enclosing call of the same thread (a driver call inside a
        // runtime call) is part of the enclosing one: count only the outer call.
        bool nested = false;
        for (size_t j = i; j-- > 0 && i - j <= 4;) {
          if (calls[j].start <= c.start && calls[j].end >= c.end) {
            nested = true;
            break;
          }
        }
        if (nested) continue;
        const uint64_t overlap = std::min(c.end, end) - std::max(c.start, begin);
        auto it = std::find_if(by_name.begin(), by_name.end(),
                               [&](const auto& e) { return e.first == c.name; });
        if (it == by_name.end()) {
          by_name.push_back({c.name, overlap});
        } else {
          it->second += overlap;
        }
      }
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
