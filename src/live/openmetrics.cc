#include "live/openmetrics.h"

#include <algorithm>
#include <map>
#include <vector>

#include "base/text_escape.h"
#include "format/live_text.h"

namespace gpuperf::live {
namespace {

enum class Kind { kCounter, kGauge };
enum class Scale { kCount, kNsAsSeconds };

// One metric family: its samples keyed by their label text. Samples with the same labels
// (two kernels whose names were cut to the same text) add up: a series appears once.
struct Family {
  const char* name;  // without _total
  Kind kind;
  Scale scale;
  const char* unit;  // "" or the name's unit suffix (OpenMetrics # UNIT)
  const char* help;
  std::map<std::string, uint64_t> samples = {};
};

// Label values in the display form of base/text_escape.h (valid UTF-8 with no control
// character: the text is read with curl on terminals too), then backslash and quote
// escaped as the format asks (a newline is \x0a already).
std::string EscapeLabel(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::string storage;
  for (char c : EscapedView(bytes, TextForm::kDisplay, storage)) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

class Labels {
 public:
  Labels& Add(const char* key, std::string_view value) {
    if (value.empty()) return *this;  // an empty label is no label to Prometheus
    text_ += text_.empty() ? "" : ",";
    text_ += key;
    text_ += "=\"";
    text_ += EscapeLabel(value);
    text_ += '"';
    return *this;
  }
  Labels& Add(const char* key, uint64_t value) { return Add(key, std::to_string(value)); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

std::string Seconds(uint64_t ns) {
  std::string fraction = std::to_string(ns % 1000000000ull);
  return std::to_string(ns / 1000000000ull) + "." + std::string(9 - fraction.size(), '0') +
         fraction;
}

void Write(const Family& family, bool openmetrics, std::string& out) {
  const bool counter = family.kind == Kind::kCounter;
  // OpenMetrics names the family without _total; the 0.0.4 format names the series.
  std::string name = family.name;
  if (counter && !openmetrics) name += "_total";
  out += "# HELP " + name + " " + family.help + "\n";
  out += "# TYPE " + name + (counter ? " counter\n" : " gauge\n");
  if (openmetrics && *family.unit != '\0') out += "# UNIT " + name + " " + family.unit + "\n";
  const std::string series = std::string(family.name) + (counter ? "_total" : "");
  for (const auto& [labels, value] : family.samples) {
    out += series;
    if (!labels.empty()) out += "{" + labels + "}";
    out += " ";
    out += family.scale == Scale::kNsAsSeconds ? Seconds(value) : std::to_string(value);
    out += "\n";
  }
}

Labels ProcessLabels(const ProcessSnapshot& p) {
  Labels labels;
  labels.Add("pid", p.pid);
  if (p.has_identity && p.identity.rank >= 0) labels.Add("rank", std::to_string(p.identity.rank));
  return labels;
}

Labels DeviceLabels(const LiveModel& model, const ProcessSnapshot& p, const DeviceCounters& d) {
  Labels labels = ProcessLabels(p);
  labels.Add("gpu", GpuIndexOf(model, d)).Add("UUID", UuidOf(d));
  labels.Add("Hostname", model.host);
  return labels;
}

// Families in the order they are written.
enum FamilyIndex {
  kActive,
  kBusy,
  kOperations,
  kCopyBytes,
  kSetBytes,
  kMemory,
  kMemoryOps,
  kKernelSeconds,
  kKernelLaunches,
  kApiCalls,
  kApiFailures,
  kApiSeconds,
  kSyncSeconds,
  kDropped,
  kProcessInfo,
  kProcessStart,
  kPages,
  kFamilyCount,
};

std::vector<Family> NewFamilies() {
  return {
      {"gpuperf_gpu_active_seconds", Kind::kCounter, Scale::kNsAsSeconds, "seconds",
       "Time any work of the process ran on the device (union of its kernels, copies, sets)."},
      {"gpuperf_gpu_busy_seconds", Kind::kCounter, Scale::kNsAsSeconds, "seconds",
       "GPU time of the process's work by kind (sum of durations; overlapping work adds up)."},
      {"gpuperf_gpu_operations", Kind::kCounter, Scale::kCount, "",
       "Kernels, copies and memory sets the process's work ran on the device."},
      {"gpuperf_copy_bytes", Kind::kCounter, Scale::kCount, "bytes",
       "Bytes copied by direction (htod, dtoh, dtod, peer, other)."},
      {"gpuperf_memset_bytes", Kind::kCounter, Scale::kCount, "bytes", "Bytes set by memset."},
      {"gpuperf_memory_allocated_bytes", Kind::kGauge, Scale::kCount, "bytes",
       "Device memory allocated through CUDA now (state=current) and at most (state=peak)."},
      {"gpuperf_memory_operations", Kind::kCounter, Scale::kCount, "",
       "CUDA device memory allocations and releases."},
      {"gpuperf_kernel_seconds", Kind::kCounter, Scale::kNsAsSeconds, "seconds",
       "GPU time of each of the process's top kernels by GPU time (the rest are not listed)."},
      {"gpuperf_kernel_launches", Kind::kCounter, Scale::kCount, "",
       "Executions of each of the process's top kernels by GPU time."},
      {"gpuperf_api_calls", Kind::kCounter, Scale::kCount, "", "CUDA API calls by function."},
      {"gpuperf_api_failures", Kind::kCounter, Scale::kCount, "",
       "CUDA API calls that returned an error (not counting 'not ready')."},
      {"gpuperf_api_seconds", Kind::kCounter, Scale::kNsAsSeconds, "seconds",
       "CPU time spent inside CUDA API calls by function."},
      {"gpuperf_sync_wait_seconds", Kind::kCounter, Scale::kNsAsSeconds, "seconds",
       "CPU time spent waiting in CUDA synchronization."},
      {"gpuperf_dropped_records", Kind::kCounter, Scale::kCount, "",
       "Records the recorder lost, by reason (gpuperf report lists them too)."},
      {"gpuperf_process_info", Kind::kGauge, Scale::kCount, "",
       "A recorded process (value 1): its command, host and ranks."},
      {"gpuperf_process_start_time_seconds", Kind::kGauge, Scale::kNsAsSeconds, "seconds",
       "When the process started recording (Unix time)."},
      {"gpuperf_live_pages", Kind::kGauge, Scale::kCount, "",
       "Live pages read by state (ok, busy: mid-write, stalled: not updated lately, stale: "
       "process gone, skipped: not a page gpuperf can trust; gpuperf serve's log says why)."},
  };
}

std::string ProgramName(const std::string& command) {
  const std::string first = command.substr(0, command.find(' '));
  const size_t slash = first.rfind('/');
  return slash == std::string::npos ? first : first.substr(slash + 1);
}

void AddProcess(const LiveModel& model, const ProcessSnapshot& p, const MetricsOptions& options,
                std::vector<Family>& f) {
  const Labels process = ProcessLabels(p);
  if (p.has_identity) {
    Labels info = process;
    const Identity& id = p.identity;
    info.Add("program", ProgramName(TextOf(id.command))).Add("host", TextOf(id.host));
    if (id.local_rank >= 0) info.Add("local_rank", std::to_string(id.local_rank));
    if (id.world_size >= 0) info.Add("world_size", std::to_string(id.world_size));
    info.Add("version", TextOf(id.version));
    f[kProcessInfo].samples[info.text()] = 1;
    f[kProcessStart].samples[process.text()] = id.start_realtime_ns;
  }
  if (p.has_counters) {
    const Counters& c = p.counters;
    f[kSyncSeconds].samples[process.text()] += c.sync_ns;
    for (uint32_t slot = 0; slot < c.device_count && slot < kMaxDevices; ++slot) {
      const DeviceCounters& d = c.devices[slot];
      const Labels device = DeviceLabels(model, p, d);
      auto with = [&device](const char* key, const char* value) {
        return Labels(device).Add(key, value).text();
      };
      f[kActive].samples[device.text()] += d.active_ns;
      f[kBusy].samples[with("kind", "kernel")] += d.kernel_ns;
      f[kBusy].samples[with("kind", "copy")] += d.copy_ns;
      f[kBusy].samples[with("kind", "set")] += d.set_ns;
      f[kOperations].samples[with("kind", "kernel")] += d.kernels;
      f[kOperations].samples[with("kind", "copy")] += d.copies;
      f[kOperations].samples[with("kind", "set")] += d.sets;
      for (uint32_t kind = 0; kind < kCopyKinds; ++kind) {
        f[kCopyBytes].samples[with("direction", kCopyKindNames[kind])] += d.copy_bytes[kind];
      }
      f[kSetBytes].samples[device.text()] += d.set_bytes;
      f[kMemory].samples[with("state", "current")] = d.memory_current;
      f[kMemory].samples[with("state", "peak")] = d.memory_peak;
      f[kMemoryOps].samples[with("op", "allocation")] += d.allocations;
      f[kMemoryOps].samples[with("op", "release")] += d.frees;
    }
    if (p.has_kernels) {
      const uint32_t shown = std::min({p.kernels.count, options.top_kernels, kMaxKernels});
      for (uint32_t i = 0; i < shown; ++i) {
        const KernelEntry& k = p.kernels.entries[i];
        Labels labels = process;
        for (uint32_t slot = 0; slot < c.device_count && slot < kMaxDevices; ++slot) {
          if (c.devices[slot].device_id == k.device_id) {
            labels = DeviceLabels(model, p, c.devices[slot]);
          }
        }
        labels.Add("kernel", TextOf(k.name));
        f[kKernelSeconds].samples[labels.text()] += k.ns;
        f[kKernelLaunches].samples[labels.text()] += k.count;
      }
    }
  }
  if (p.has_apis) {
    for (uint32_t i = 0; i < p.apis.count && i < kMaxApis; ++i) {
      const ApiEntry& a = p.apis.entries[i];
      const std::string labels = Labels(process).Add("api", TextOf(a.name)).text();
      f[kApiCalls].samples[labels] += a.calls;
      f[kApiFailures].samples[labels] += a.failures;
      f[kApiSeconds].samples[labels] += a.ns;
    }
  }
  if (p.has_stats) {
    // Every reason, zeros too, so that rate() has a start.
    for (uint32_t id = 0; id < kStatSlots; ++id) {
      const StatInfo info = GetStatInfo(id);
      if (info.severity != StatSeverity::kDataLoss || info.name == "unknown_stat") continue;
      f[kDropped].samples[Labels(process).Add("reason", info.name).text()] += p.stats.values[id];
    }
  }
}

}  // namespace

std::string RenderMetrics(const LiveModel& model, const MetricsOptions& options) {
  std::vector<Family> families = NewFamilies();
  uint64_t states[3] = {};
  for (const ProcessSnapshot& process : model.scan.processes) {
    AddProcess(model, process, options, families);
    states[static_cast<int>(process.state)]++;
  }
  Family& pages = families[kPages];
  pages.samples[Labels().Add("state", "ok").text()] = states[0];
  pages.samples[Labels().Add("state", "busy").text()] = states[1];
  pages.samples[Labels().Add("state", "stalled").text()] = states[2];
  pages.samples[Labels().Add("state", "stale").text()] = model.scan.stale;
  pages.samples[Labels().Add("state", "skipped").text()] = model.scan.skipped.size();
  std::string out;
  for (const Family& family : families) Write(family, options.openmetrics, out);
  if (options.openmetrics) out += "# EOF\n";
  return out;
}

const char* MetricsContentType(bool openmetrics) {
  return openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                     : "text/plain; version=0.0.4; charset=utf-8";
}

bool WantsOpenMetrics(const std::string& accept) {
  return accept.find("application/openmetrics-text") != std::string::npos;
}

}  // namespace gpuperf::live
