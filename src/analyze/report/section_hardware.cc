// The report's hardware part: `gpuperf metrics` ranges averaged per kernel (or per NVTX range
// or time window) with their bound, and `record --pc-sampling`'s hottest lines per kernel.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/hardware/hardware_verdict.h"
#include "analyze/hardware/pc_profile.h"
#include "analyze/report/report_builder.h"
#include "base/demangle.h"
#include "base/metric_sets.h"

namespace gpuperf::report {
namespace {

// Lines kept per kernel in the report (`gpuperf source` shows them all).
constexpr size_t kHotLinesPerKernel = 5;

StallList SortedStalls(const StallCounts& stalls) {
  StallList out(stalls.begin(), stalls.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

class HardwareSection final : public ReportSection {
 public:
  explicit HardwareSection(ReportContext& context) : context_(context) {}

  void OnMetricRanges(std::span<const MetricRangeRecord> records) override {
    for (const MetricRangeRecord& r : records) ranges_[Key(r.pid, r.range_id)] = r;
  }
  void OnMetricValues(std::span<const MetricValueRecord> records) override {
    for (const MetricValueRecord& v : records) {
      values_[Key(v.pid, v.range_id)].emplace_back(v.metric, v.value);
    }
  }
  void OnPcSample(const PcSampleRecord& s) override {
    if (!context_.KernelSelected(s.function)) return;
    for (const PcStallCount& stall : s.stalls) {
      pc_.AddSample(context_.Str(s.function), s.cubin_crc, s.pc_offset, context_.Str(stall.reason),
                    stall.samples);
    }
  }
  void OnSassLine(const SassLineRecord& l) override {
    pc_.AddLine(context_.Str(l.function), l.cubin_crc, l.pc_offset, context_.Str(l.file), l.line,
                context_.Str(l.instruction));
  }

  void Finish(ReportModel& model) override {
    FinishMetrics(model);
    FinishPcSampling(model);
  }

 private:
  static uint64_t Key(uint32_t pid, uint32_t range) { return uint64_t{pid} << 32 | range; }

  // Per (kind, name): each metric's mean, weighted by each range's duration where measured.
  void FinishMetrics(ReportModel& model) {
    struct Sums {
      HardwareRow row;
      std::map<StringId, std::pair<double, double>> weighted;  // metric -> (sum v*w, sum w)
      uint64_t order = 0;
    };
    const std::string duration_metric(FindKnownMetric("duration")->cupti_name);
    std::map<std::pair<MetricRangeKind, StringId>, Sums> rows;
    uint64_t order = 0;
    // Range ids grow with time within a process: the map's order is the order of measurement.
    for (const auto& [key, range] : ranges_) {
      if (range.kind == MetricRangeKind::kKernel && !context_.KernelSelected(range.name)) continue;
      auto found = values_.find(key);
      if (found == values_.end()) continue;
      double duration = 0;
      for (const auto& [metric, value] : found->second) {
        if (context_.Str(metric) == duration_metric && value > 0) duration = value;
      }
      const double weight = duration > 0 ? duration : 1;
      auto [it, inserted] = rows.try_emplace({range.kind, range.name});
      Sums& sums = it->second;
      if (inserted) {
        sums.order = order++;
        sums.row.kind = range.kind;
        sums.row.name = context_.Str(range.name);
        sums.row.display_name = range.kind == MetricRangeKind::kKernel
                                    ? ShortName(Demangle(sums.row.name))
                                    : sums.row.name;
        sums.row.metric_set = context_.Str(range.metric_set);
        sums.row.passes = range.passes;
        sums.row.serialized = range.serialized != 0;
      }
      ++sums.row.ranges;
      sums.row.duration_ns += duration;
      for (const auto& [metric, value] : found->second) {
        auto& [weighted, total] = sums.weighted[metric];
        weighted += value * weight;
        total += weight;
      }
    }
    std::vector<Sums*> ordered;
    for (auto& [key, sums] : rows) ordered.push_back(&sums);
    // Kernels by time measured (most first), then ranges in the order they ran.
    std::stable_sort(ordered.begin(), ordered.end(), [](const Sums* a, const Sums* b) {
      const bool ak = a->row.kind == MetricRangeKind::kKernel;
      const bool bk = b->row.kind == MetricRangeKind::kKernel;
      if (ak != bk) return ak;
      if (ak && a->row.duration_ns != b->row.duration_ns) {
        return a->row.duration_ns > b->row.duration_ns;
      }
      return a->order < b->order;
    });
    for (Sums* sums : ordered) {
      for (const auto& [metric, sum] : sums->weighted) {
        sums->row.metrics.push_back(
            {context_.Str(metric), sum.second > 0 ? sum.first / sum.second : 0});
      }
      sums->row.verdict = JudgeBound(sums->row);
      model.hardware.push_back(std::move(sums->row));
    }
  }

  void FinishPcSampling(ReportModel& model) {
    const PcProfile profile = pc_.Finish();
    for (const PcFunction& f : profile.functions) {
      PcKernelRow row;
      row.name = f.name;
      row.display_name = ShortName(Demangle(f.name));
      row.samples = f.samples;
      row.not_issued = f.not_issued;
      row.fraction = profile.samples ? static_cast<double>(f.samples) / profile.samples : 0;
      row.has_lines = f.has_lines;
      row.stalls = SortedStalls(f.stalls);
      for (const PcLineRow& line : f.Lines()) {
        if (row.lines.size() == kHotLinesPerKernel) break;
        row.lines.push_back({line.file, line.line, line.pc_offset, line.samples,
                             f.samples ? static_cast<double>(line.samples) / f.samples : 0,
                             SortedStalls(line.stalls)});
      }
      model.pc_sampling.push_back(std::move(row));
    }
  }

  ReportContext& context_;
  std::map<uint64_t, MetricRangeRecord> ranges_;  // (pid, range id)
  std::unordered_map<uint64_t, std::vector<std::pair<StringId, double>>> values_;
  PcProfileCollector pc_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeHardwareSection(ReportContext& context) {
  return std::make_unique<HardwareSection>(context);
}

}  // namespace gpuperf::report
