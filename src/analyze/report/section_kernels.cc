// Kernels: time statistics per kernel name (with the median), launch configurations and
// their theoretical occupancy; the summary's kernel totals.
#include <algorithm>

#include "analyze/report/report_builder.h"
#include "base/demangle.h"

namespace gpuperf::report {
namespace {

// Kernel durations kept for the median: 4 bytes each until one does not fit.
class DurationList {
 public:
  void Add(uint64_t ns) {
    if (!wide_.empty() || ns > UINT32_MAX) {
      if (wide_.empty()) wide_.assign(narrow_.begin(), narrow_.end());
      std::vector<uint32_t>().swap(narrow_);
      wide_.push_back(ns);
    } else {
      narrow_.push_back(static_cast<uint32_t>(ns));
    }
  }
  // Lower median; consumes the list.
  uint64_t TakeMedian() {
    uint64_t median = wide_.empty() ? Median(narrow_) : Median(wide_);
    std::vector<uint32_t>().swap(narrow_);
    std::vector<uint64_t>().swap(wide_);
    return median;
  }

 private:
  template <class T>
  static uint64_t Median(std::vector<T>& v) {
    if (v.empty()) return 0;
    auto mid = v.begin() + (v.size() - 1) / 2;
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
  }
  std::vector<uint32_t> narrow_;
  std::vector<uint64_t> wide_;
};

struct ConfigAgg {
  KernelConfig config;
  uint32_t pid = 0;  // the first launch's process and device: occupancy uses its limits
  uint32_t device = 0;
};

struct KernelAgg {
  StringId name = 0;
  DurationStats time;
  DurationList durations;
  std::vector<ConfigAgg> configs;
  size_t last_config = 0;
};

bool SameConfig(const KernelConfig& c, const KernelRecord& k) {
  return c.grid[0] == k.grid_x && c.grid[1] == k.grid_y && c.grid[2] == k.grid_z &&
         c.block[0] == k.block_x && c.block[1] == k.block_y && c.block[2] == k.block_z &&
         c.registers_per_thread == k.registers_per_thread &&
         c.static_shared_bytes == k.static_shared_bytes &&
         c.dynamic_shared_bytes == k.dynamic_shared_bytes;
}

void CountConfig(KernelAgg& agg, const KernelRecord& k) {
  // Launches of one kernel mostly repeat one configuration: try the last one first.
  if (agg.last_config < agg.configs.size() && SameConfig(agg.configs[agg.last_config].config, k)) {
    ++agg.configs[agg.last_config].config.calls;
    return;
  }
  for (size_t i = 0; i < agg.configs.size(); ++i) {
    if (SameConfig(agg.configs[i].config, k)) {
      ++agg.configs[i].config.calls;
      agg.last_config = i;
      return;
    }
  }
  ConfigAgg c;
  c.config.grid[0] = k.grid_x;
  c.config.grid[1] = k.grid_y;
  c.config.grid[2] = k.grid_z;
  c.config.block[0] = k.block_x;
  c.config.block[1] = k.block_y;
  c.config.block[2] = k.block_z;
  c.config.registers_per_thread = k.registers_per_thread;
  c.config.static_shared_bytes = k.static_shared_bytes;
  c.config.dynamic_shared_bytes = k.dynamic_shared_bytes;
  c.config.calls = 1;
  c.pid = k.pid;
  c.device = k.device_id;
  agg.last_config = agg.configs.size();
  agg.configs.push_back(c);
}

class KernelsSection final : public ReportSection {
 public:
  explicit KernelsSection(ReportContext& context) : context_(context) {}

  void OnKernels(std::span<const KernelRecord> records) override {
    for (const KernelRecord& k : records) {
      if (!context_.KernelSelected(k.name)) continue;
      const uint64_t ns = Duration(k.start_ns, k.end_ns);
      KernelAgg& agg = kernels_by_name_[k.name];
      AddDuration(agg.time, ns);
      agg.durations.Add(ns);
      CountConfig(agg, k);
      ++kernels_;
      kernel_ns_ += ns;
    }
  }

  void Finish(ReportModel& model) override {
    model.summary.kernels = kernels_;
    model.summary.kernel_ns = kernel_ns_;
    DemangleCache demangler;
    for (KernelAgg& agg : kernels_by_name_.rows()) {
      KernelRow row;
      row.name = context_.Str(agg.name);
      row.demangled = demangler.Get(row.name);
      row.display_name = ShortName(row.demangled);
      row.time = agg.time;
      row.time.median_ns = agg.durations.TakeMedian();
      row.gpu_time_fraction = kernel_ns_ ? static_cast<double>(agg.time.total_ns) / kernel_ns_ : 0;
      for (ConfigAgg& c : agg.configs) {
        c.config.occupancy = OccupancyOn(c);
        row.configs.push_back(c.config);
      }
      std::stable_sort(
          row.configs.begin(), row.configs.end(),
          [](const KernelConfig& a, const KernelConfig& b) { return a.calls > b.calls; });
      model.kernels.push_back(std::move(row));
    }
  }

 private:
  Occupancy OccupancyOn(const ConfigAgg& c) const {
    for (const DeviceRecord& d : context_.devices()) {
      if (d.pid == c.pid && d.device_id == c.device) {
        const KernelConfig& k = c.config;
        return ComputeOccupancy(d, {k.block[0] * k.block[1] * k.block[2], k.registers_per_thread,
                                    k.static_shared_bytes + k.dynamic_shared_bytes});
      }
    }
    return c.config.occupancy;
  }

  ReportContext& context_;
  RowsByName<KernelAgg> kernels_by_name_;
  uint64_t kernels_ = 0;
  uint64_t kernel_ns_ = 0;
};

}  // namespace

std::unique_ptr<ReportSection> MakeKernelsSection(ReportContext& context) {
  return std::make_unique<KernelsSection>(context);
}

}  // namespace gpuperf::report
