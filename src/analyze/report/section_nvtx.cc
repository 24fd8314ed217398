// NVTX ranges: time statistics per (domain, name), and the kernels launched inside each
// range with their GPU time. A kernel is inside a range when its launch is: the thread
// and enter time of the call with the kernel's correlation id, which the Correlator's
// link of that call tells (ReportContext::LinkApiCalls).
#include <algorithm>
#include <unordered_map>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

// A kernel the report counts, by its correlation id; its GPU time in 32 bits (over four
// seconds goes to long_kernels), because there is one per kernel.
struct KernelWork {
  uint32_t correlation_id = 0;
  uint32_t ns = 0;
};

struct ProcessNvtx {
  std::vector<NvtxRecord> ranges;
  std::vector<KernelWork> kernels;
  std::vector<std::pair<uint32_t, uint64_t>> long_kernels;  // correlation id, ns
};

// A kernel launched on a thread with ranges.
struct Launch {
  uint64_t launch_ns = 0;
  uint64_t ns = 0;
};

class NvtxSection final : public ReportSection {
 public:
  explicit NvtxSection(ReportContext& context) : context_(context) {}

  void OnNvtxRanges(std::span<const NvtxRecord> records) override {
    for (const NvtxRecord& n : records) nvtx_[n.pid].ranges.push_back(n);
  }
  void OnKernels(std::span<const KernelRecord> records) override {
    if (!context_.nvtx_in_trace()) return;  // no range to put them in: 8 bytes a kernel saved
    for (const KernelRecord& k : records) {
      if (!context_.KernelSelected(k.name)) continue;
      ProcessNvtx& p = nvtx_[k.pid];
      const uint64_t ns = Duration(k.start_ns, k.end_ns);
      if (ns <= UINT32_MAX) {
        p.kernels.push_back({k.correlation_id, static_cast<uint32_t>(ns)});
      } else {
        p.long_kernels.push_back({k.correlation_id, ns});
      }
    }
  }

  void Finish(ReportModel& model) override {
    std::unordered_map<uint64_t, size_t> index;  // (domain, name) -> row
    for (auto& [pid, p] : nvtx_) {
      // Each range's row, in the order of p.ranges.
      std::vector<size_t> row_of(p.ranges.size());
      for (size_t i = 0; i < p.ranges.size(); ++i) {
        const NvtxRecord& n = p.ranges[i];
        const uint64_t key = (uint64_t{n.domain} << 32) | n.name;
        auto [it, inserted] = index.try_emplace(key, model.nvtx.size());
        if (inserted) {
          model.nvtx.push_back({});
          model.nvtx.back().name = context_.Str(n.name);
          model.nvtx.back().domain = context_.Str(n.domain);
        }
        row_of[i] = it->second;
        NvtxRow& row = model.nvtx[it->second];
        if (n.end_ns == 0) {
          ++row.unterminated;
        } else {
          AddDuration(row.time, Duration(n.start_ns, n.end_ns));
        }
      }
      if (!p.ranges.empty()) AddKernelsInRanges(pid, p, row_of, model);
      p = ProcessNvtx();
    }
    if (!context_.options().nvtx_regex.empty()) {
      const std::regex filter(context_.options().nvtx_regex);
      std::erase_if(model.nvtx,
                    [&](const NvtxRow& row) { return !std::regex_search(row.name, filter); });
    }
  }

 private:
  // GPU time of kernels launched inside each range: sweep each thread's launches (sorted
  // by time) against its ranges (sorted by start), keeping the ranges still open.
  void AddKernelsInRanges(uint32_t pid, const ProcessNvtx& p, const std::vector<size_t>& row_of,
                          ReportModel& model) {
    std::unordered_map<uint32_t, std::vector<size_t>> ranges_by_tid;
    for (size_t i = 0; i < p.ranges.size(); ++i) ranges_by_tid[p.ranges[i].tid].push_back(i);
    std::unordered_map<uint32_t, std::vector<Launch>> launches_by_tid;
    context_.LinkApiCalls(pid);
    auto add = [&](uint32_t correlation_id, uint64_t ns) {
      const auto* link = context_.FindLink(pid, correlation_id);
      if (link == nullptr || !context_.InTimeRange(link->launch_ns)) return;
      if (ranges_by_tid.count(link->tid) == 0) return;
      launches_by_tid[link->tid].push_back({link->launch_ns, ns});
    };
    for (const KernelWork& k : p.kernels) add(k.correlation_id, k.ns);
    for (const auto& [correlation_id, ns] : p.long_kernels) add(correlation_id, ns);

    for (auto& [tid, launches] : launches_by_tid) {
      std::vector<size_t>& ranges = ranges_by_tid[tid];
      std::sort(ranges.begin(), ranges.end(),
                [&](size_t a, size_t b) { return p.ranges[a].start_ns < p.ranges[b].start_ns; });
      auto by_time = [](const Launch& a, const Launch& b) { return a.launch_ns < b.launch_ns; };
      if (!std::is_sorted(launches.begin(), launches.end(), by_time)) {
        std::stable_sort(launches.begin(), launches.end(), by_time);
      }
      std::vector<size_t> open;
      std::vector<size_t> rows_hit;
      size_t next = 0;
      for (const Launch& launch : launches) {
        while (next < ranges.size() && p.ranges[ranges[next]].start_ns <= launch.launch_ns) {
          open.push_back(ranges[next++]);
        }
        std::erase_if(open, [&](size_t r) {
          const uint64_t end = p.ranges[r].end_ns;
          return end != 0 && end < launch.launch_ns;
        });
        // Nested ranges of one name count a kernel once.
        rows_hit.clear();
        for (size_t r : open) rows_hit.push_back(row_of[r]);
        std::sort(rows_hit.begin(), rows_hit.end());
        rows_hit.erase(std::unique(rows_hit.begin(), rows_hit.end()), rows_hit.end());
        for (size_t row : rows_hit) {
          model.nvtx[row].gpu_time_ns += launch.ns;
          ++model.nvtx[row].kernels;
        }
      }
    }
  }

  ReportContext& context_;
  PerProcess<ProcessNvtx> nvtx_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeNvtxSection(ReportContext& context) {
  return std::make_unique<NvtxSection>(context);
}

}  // namespace gpuperf::report
