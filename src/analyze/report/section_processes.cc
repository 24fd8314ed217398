// The summary's lists of processes (command, host, wall time) and their GPUs.
#include <algorithm>
#include <tuple>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class ProcessesSection final : public ReportSection {
 public:
  explicit ProcessesSection(ReportContext& context) : context_(context) {}

  void Finish(ReportModel& model) override {
    const uint64_t origin = context_.origin();
    for (const auto& [pid, p] : context_.processes()) {
      ProcessRow row;
      row.pid = pid;
      if (p.process) {
        const ProcessRecord& r = *p.process;
        row.command = context_.Str(r.command);
        row.hostname = context_.Str(r.hostname);
        row.start_ns = context_.SinceOrigin(r.start_ns);
        row.complete = r.end_ns != 0;
        row.recording = !row.complete && context_.read_report().StillRecording(pid);
        // A process that never wrote its final flush ends at its last activity.
        const uint64_t end = r.end_ns ? r.end_ns : p.last_ns;
        row.wall_ns = Duration(r.start_ns ? r.start_ns : p.first_ns, end);
      } else if (p.first_ns != kNoTime) {
        row.start_ns = p.first_ns - origin;
        row.wall_ns = Duration(p.first_ns, p.last_ns);
      }
      model.processes.push_back(std::move(row));
    }
    for (const DeviceRecord& d : context_.devices()) {
      model.devices.push_back(
          {d.pid, d.device_id, context_.Str(d.name), d.compute_major, d.compute_minor, d.sm_count});
    }
    std::sort(model.devices.begin(), model.devices.end(),
              [](const DeviceRow& a, const DeviceRow& b) {
                return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
              });
  }

 private:
  ReportContext& context_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeProcessesSection(ReportContext& context) {
  return std::make_unique<ProcessesSection>(context);
}

}  // namespace gpuperf::report
