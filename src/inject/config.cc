#include "inject/config.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "base/quantity.h"

namespace gpuperf::inject {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;

// A GPUPERF_* number, read as `record` reads the option it comes from (base/quantity.h):
// false when unset or bad; the first bad one fills `error` ("GPUPERF_BUFFER_KB: "nan" is not
// a size; ...") and the setting keeps its default. The number counts the unit in the
// variable's name, or carries its own ("GPUPERF_DELAY_MS=1.5s").
template <class Parse>
bool ReadNumber(const ConfigLookup& get, const char* name, Parse parse, uint64_t* out,
                std::string* error) {
  const char* text = get(name);
  if (text == nullptr || *text == '\0') return false;
  Result<uint64_t> value = parse(name, text);
  if (!value.ok()) {
    if (error->empty()) *error = value.status().message();
    return false;
  }
  *out = *value;
  return true;
}

// Durations in whole milliseconds (a bare number is milliseconds).
bool ReadMs(const ConfigLookup& get, const char* name, uint64_t min_ms, uint64_t max_ms,
            uint64_t* ms, std::string* error) {
  uint64_t ns = 0;
  const DurationSpec spec{kNsPerMs, min_ms * kNsPerMs, max_ms * kNsPerMs};
  auto parse = [&](const char* n, const char* text) { return ParseDurationNs(n, text, spec); };
  if (!ReadNumber(get, name, parse, &ns, error)) return false;
  *ms = CeilDiv(ns, kNsPerMs);
  return true;
}

// Sizes in bytes (a bare number counts `unit`).
bool ReadBytes(const ConfigLookup& get, const char* name, uint64_t unit, uint64_t min, uint64_t max,
               uint64_t* bytes, std::string* error) {
  const SizeSpec spec{unit, min * unit, max * unit};
  auto parse = [&](const char* n, const char* text) { return ParseBytes(n, text, spec); };
  return ReadNumber(get, name, parse, bytes, error);
}

bool ReadCount(const ConfigLookup& get, const char* name, const CountSpec& spec, uint64_t* count,
               std::string* error) {
  auto parse = [&](const char* n, const char* text) { return ParseCount(n, text, spec); };
  return ReadNumber(get, name, parse, count, error);
}

// A variable with two accepted words: `*value` becomes true for `yes`, false for `no`.
void ReadSwitch(const ConfigLookup& get, const char* name, const char* yes, const char* no,
                bool* value, std::string* error) {
  const char* text = get(name);
  if (text == nullptr || *text == '\0') return;
  if (std::strcmp(text, yes) == 0) {
    *value = true;
  } else if (std::strcmp(text, no) == 0) {
    *value = false;
  } else if (error->empty()) {
    *error = std::string(name) + "=" + text + " is not " + yes + " or " + no;
  }
}

void ReadHardwareSettings(const ConfigLookup& get, Config& config, std::string* error) {
  if (const char* set = get("GPUPERF_METRICS"); set && *set) config.metric_set = set;
  if (const char* regex = get("GPUPERF_METRICS_KERNEL")) config.metric_kernel_regex = regex;
  if (const char* ranges = get("GPUPERF_METRICS_RANGES"); ranges && *ranges) {
    const std::string text = ranges;
    if (text == "nvtx") {
      config.metric_ranges = MetricRanges::kNvtx;
    } else if (text.rfind("window:", 0) == 0) {
      const DurationSpec spec{kNsPerMs, kNsPerMs, uint64_t{kMaxMetricWindowMs} * kNsPerMs};
      auto ns = ParseDurationNs("GPUPERF_METRICS_RANGES window", text.substr(7), spec);
      if (ns.ok()) {
        config.metric_ranges = MetricRanges::kWindows;
        config.metric_window_ms = static_cast<uint32_t>(CeilDiv(*ns, kNsPerMs));
      } else if (error->empty()) {
        *error = ns.status().message();
      }
    } else if (text != "kernel" && error->empty()) {
      *error = "GPUPERF_METRICS_RANGES=" + text + " is not kernel, nvtx or window:MS";
    }
  }
  ReadSwitch(get, "GPUPERF_PC_SAMPLING", "1", "0", &config.pc_sampling, error);
  uint64_t value = 0;
  if (ReadCount(get, "GPUPERF_PC_PERIOD", {kMinPcPeriod, kMaxPcPeriod}, &value, error)) {
    config.pc_sampling_period = static_cast<uint32_t>(value);
  }
  ReadBytes(get, "GPUPERF_CUBIN_CAP_MB", kMiB, 1, kMaxCubinCapMiB, &config.cubin_cap_bytes, error);
}

}  // namespace

Config ReadConfigFromEnvironment(std::string* error) {
  return ReadConfig([](const char* name) -> const char* { return std::getenv(name); }, error);
}

Config ReadConfig(const ConfigLookup& get, std::string* error) {
  Config config;
  if (const char* dir = get("GPUPERF_OUTPUT_DIR"); dir && *dir) config.output_dir = dir;
  if (const char* acts = get("GPUPERF_ACTIVITIES"); acts && *acts) {
    std::string bad;
    if (!ParseActivities(acts, &config.activities, &bad) && error->empty()) {
      *error = "GPUPERF_ACTIVITIES: unknown activity '" + bad + "'";
    }
  }
  if (const char* stacks = get("GPUPERF_STACKS"); stacks && *stacks) {
    config.stacks = std::strcmp(stacks, "0") != 0;
  }
  ReadSwitch(get, "GPUPERF_API_SOURCE", "callbacks", "cupti", &config.api_from_callbacks, error);
  if (const char* unwind = get("GPUPERF_UNWIND"); unwind && *unwind) {
    if (!ParseUnwindMode(unwind, &config.unwind) && error->empty()) {
      *error = std::string("GPUPERF_UNWIND=") + unwind + " is not auto, table, fp or libunwind";
    }
  }
  ReadSwitch(get, "GPUPERF_UNWIND_VERIFY", "1", "0", &config.unwind_verify, error);
  ReadSwitch(get, "GPUPERF_PYTHON", "on", "off", &config.python_stacks, error);
  ReadSwitch(get, "GPUPERF_NATIVE_STACKS", "inner", "full", &config.cut_native_at_python, error);
  ReadSwitch(get, "GPUPERF_STACK_MEMO", "on", "off", &config.stack_memo, error);
  ReadSwitch(get, "GPUPERF_HW_TRACE", "on", "off", &config.hw_trace, error);
  ReadSwitch(get, "GPUPERF_LIVE", "on", "off", &config.live_page, error);
  ReadBytes(get, "GPUPERF_BUFFER_KB", kKiB, kMinBufferKiB, kMaxBufferKiB, &config.buffer_bytes,
            error);
  config.max_memory_bytes = DefaultMemoryCap(static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                             static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  ReadBytes(get, "GPUPERF_MAX_MEMORY_MB", kMiB, kMinMaxMemoryMiB, kMaxMaxMemoryMiB,
            &config.max_memory_bytes, error);
  uint64_t value = 0;
  if (ReadMs(get, "GPUPERF_FLUSH_PERIOD_MS", kMinFlushPeriodMs, kMaxFlushPeriodMs, &value, error)) {
    config.flush_period_ms = static_cast<uint32_t>(value);
  }
  if (ReadMs(get, "GPUPERF_CUPTI_FLUSH_MS", 0, kMaxFlushPeriodMs, &value, error)) {
    config.cupti_flush_period_ms = static_cast<uint32_t>(value);  // 0: CUPTI's own heuristics
  }
  if (ReadCount(get, "GPUPERF_STACK_DEPTH", {1, kMaxStackDepth}, &value, error)) {
    config.max_stack_depth = static_cast<uint32_t>(value);
  }
  if (ReadCount(get, "GPUPERF_POWER_HZ", {0, kMaxPowerHz}, &value, error)) {
    config.power_hz = static_cast<uint32_t>(value);
  }
  const uint64_t max_capture_ms = kMaxDurationNs / kNsPerMs;
  ReadMs(get, "GPUPERF_DELAY_MS", 0, max_capture_ms, &config.delay_ms, error);
  ReadMs(get, "GPUPERF_DURATION_MS", 0, max_capture_ms, &config.duration_ms, error);
  if (const char* dir = get("GPUPERF_SAVE_BUFFERS"); dir && *dir) {
    config.save_buffers_dir = dir;
  }
  ReadMs(get, "GPUPERF_FLIGHT_MS", 0, kMaxFlightWindowMs, &config.flight_window_ms,
         error);  // 0: off
  ReadBytes(get, "GPUPERF_FLIGHT_MEMORY_MB", kMiB, 1, kMaxFlightMemoryMiB,
            &config.flight_memory_bytes, error);
  if (ReadCount(get, "GPUPERF_FLIGHT_SIGNAL", {0, 64}, &value, error)) {
    config.flight_signal = static_cast<int>(value);  // 0: no signal asks for dumps
  }
  ReadSwitch(get, "GPUPERF_FLIGHT_ON_ERROR", "on", "off", &config.flight_on_error, error);
  if (ReadCount(get, "GPUPERF_SAMPLE_LAUNCHES", {0, kMaxSampleLaunchesPerSecond, "/s"}, &value,
                error)) {
    config.sample_launches_per_s = static_cast<uint32_t>(value);  // 0: every launch's stack
  }
  ReadHardwareSettings(get, config, error);
  // The flight ring keeps timed records of a window; PC samples and metric ranges are totals
  // of the run (record refuses the mix; this is for a hand-set environment).
  if (config.flight_window_ms && (config.pc_sampling || !config.metric_set.empty())) {
    config.pc_sampling = false;
    config.metric_set.clear();
    if (error->empty()) *error = "GPUPERF_FLIGHT_MS turns PC sampling and metrics off";
  }
  if (config.first_buffer_bytes > config.buffer_bytes) {
    config.first_buffer_bytes = config.buffer_bytes;
  }
  if (config.max_memory_bytes < 2 * config.buffer_bytes) {
    config.max_memory_bytes = 2 * config.buffer_bytes;
  }
  // A cap below the soft budget is the whole budget: nothing grows.
  if (config.soft_memory_bytes > config.max_memory_bytes) {
    config.soft_memory_bytes = config.max_memory_bytes;
  }
  return config;
}

uint64_t DefaultMemoryCap(uint64_t physical_bytes) {
  const uint64_t soft = uint64_t{kSoftMemoryMiB} << 20;
  uint64_t cap = uint64_t{kMaxMemoryCapMiB} << 20;
  if (physical_bytes > 0 && physical_bytes / kMaxMemoryPhysicalFraction < cap) {
    cap = physical_bytes / kMaxMemoryPhysicalFraction;
  }
  return cap < soft ? soft : cap;
}

}  // namespace gpuperf::inject
