// Energy: the GPU energy of each kernel name, estimated from the power readings of the
// recording (analyze/energy/energy.h), and per GPU the readings' total next to NVML's
// energy counter. Keeps every kernel's interval, but only when the trace has readings.
#include <algorithm>

#include "analyze/energy/energy.h"
#include "analyze/ranks/clock_shift_sink.h"
#include "analyze/report/report_builder.h"
#include "base/demangle.h"

namespace gpuperf::report {
namespace {

class EnergySection final : public ReportSection {
 public:
  explicit EnergySection(ReportContext& context)
      : context_(context), active_(!context.rank_scan().power_samples.empty()) {}

  void OnKernels(std::span<const KernelRecord> records) override {
    if (!active_) return;
    for (const KernelRecord& k : records) {
      spans_.push_back({k.pid, k.device_id, k.start_ns, k.end_ns, k.name});
      max_name_ = std::max(max_name_, k.name);
    }
  }

  void Finish(ReportModel& model) override {
    if (!active_) return;
    // The readings as recorded, put on the clock the kernels arrived on.
    std::vector<PowerSampleRecord> samples = context_.rank_scan().power_samples;
    for (PowerSampleRecord& s : samples) {
      ShiftRecordTimes(s, context_.clock_alignment().OffsetOf(s.pid));
    }
    struct PerName {
      uint64_t calls = 0;
      uint64_t gpu_ns = 0;
    };
    std::vector<PerName> per_name(max_name_ + 1);
    for (const EnergySpan& s : spans_) {
      ++per_name[s.tag].calls;
      per_name[s.tag].gpu_ns += Duration(s.start_ns, s.end_ns);
    }
    EnergyAttribution attribution = AttributeEnergy(samples, std::move(spans_), max_name_ + 1);
    EnergyModel& energy = model.energy;
    energy.devices = attribution.devices;
    for (const EnergyDevice& d : energy.devices) {
      energy.attributed_j += d.attributed_j;
      energy.idle_j += d.idle_j;
      energy.sampled_j += d.sampled_j;
    }
    for (StringId name = 0; name <= max_name_; ++name) {
      if (per_name[name].calls == 0) continue;
      EnergyKernelRow row;
      row.name = context_.Str(name);
      row.display_name = ShortName(Demangle(row.name));
      row.calls = per_name[name].calls;
      row.gpu_ns = per_name[name].gpu_ns;
      row.joules = attribution.joules_by_tag[name];
      row.share = energy.attributed_j > 0 ? row.joules / energy.attributed_j : 0;
      energy.kernels.push_back(std::move(row));
    }
    std::sort(energy.kernels.begin(), energy.kernels.end(),
              [](const EnergyKernelRow& a, const EnergyKernelRow& b) {
                return a.joules != b.joules ? a.joules > b.joules : a.name < b.name;
              });
  }

 private:
  ReportContext& context_;
  const bool active_;
  std::vector<EnergySpan> spans_;
  StringId max_name_ = 0;
};

}  // namespace

std::unique_ptr<ReportSection> MakeEnergySection(ReportContext& context) {
  return std::make_unique<EnergySection>(context);
}

}  // namespace gpuperf::report
