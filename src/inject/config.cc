#include "inject/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gpuperf::inject {
namespace {

bool ReadUint(const char* name, uint64_t* out, std::string* error) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return true;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0') {
    if (error->empty()) *error = std::string(name) + "=" + text + " is not a number";
    return false;
  }
  *out = value;
  return true;
}

// A variable with two accepted words: `*value` becomes true for `yes`, false for `no`.
void ReadSwitch(const char* name, const char* yes, const char* no, bool* value,
                std::string* error) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return;
  if (std::strcmp(text, yes) == 0) {
    *value = true;
  } else if (std::strcmp(text, no) == 0) {
    *value = false;
  } else if (error->empty()) {
    *error = std::string(name) + "=" + text + " is not " + yes + " or " + no;
  }
}

void ReadHardwareSettings(Config& config, std::string* error) {
  if (const char* set = std::getenv("GPUPERF_METRICS"); set && *set) config.metric_set = set;
  if (const char* regex = std::getenv("GPUPERF_METRICS_KERNEL")) config.metric_kernel_regex = regex;
  if (const char* ranges = std::getenv("GPUPERF_METRICS_RANGES"); ranges && *ranges) {
    const std::string text = ranges;
    if (text == "nvtx") {
      config.metric_ranges = MetricRanges::kNvtx;
    } else if (text.rfind("window:", 0) == 0 && text.size() > 7 &&
               text.find_first_not_of("0123456789", 7) == std::string::npos) {
      config.metric_ranges = MetricRanges::kWindows;
      config.metric_window_ms = static_cast<uint32_t>(std::strtoul(text.c_str() + 7, nullptr, 10));
    } else if (text != "kernel" && error->empty()) {
      *error = "GPUPERF_METRICS_RANGES=" + text + " is not kernel, nvtx or window:MS";
    }
  }
  ReadSwitch("GPUPERF_PC_SAMPLING", "1", "0", &config.pc_sampling, error);
  uint64_t value = 0;
  if (ReadUint("GPUPERF_PC_PERIOD", &value, error) && value) {
    if (value >= 5 && value <= 31) {
      config.pc_sampling_period = static_cast<uint32_t>(value);
    } else if (error->empty()) {
      *error = "GPUPERF_PC_PERIOD=" + std::to_string(value) + " is not within 5..31";
    }
  }
  value = 0;
  if (ReadUint("GPUPERF_CUBIN_CAP_MB", &value, error) && value)
    config.cubin_cap_bytes = value << 20;
}

}  // namespace

Config ReadConfigFromEnvironment(std::string* error) {
  Config config;
  if (const char* dir = std::getenv("GPUPERF_OUTPUT_DIR"); dir && *dir) config.output_dir = dir;
  if (const char* acts = std::getenv("GPUPERF_ACTIVITIES"); acts && *acts) {
    std::string bad;
    if (!ParseActivities(acts, &config.activities, &bad) && error->empty()) {
      *error = "GPUPERF_ACTIVITIES: unknown activity '" + bad + "'";
    }
  }
  if (const char* stacks = std::getenv("GPUPERF_STACKS"); stacks && *stacks) {
    config.stacks = std::strcmp(stacks, "0") != 0;
  }
  ReadSwitch("GPUPERF_API_SOURCE", "callbacks", "cupti", &config.api_from_callbacks, error);
  if (const char* unwind = std::getenv("GPUPERF_UNWIND"); unwind && *unwind) {
    if (!ParseUnwindMode(unwind, &config.unwind) && error->empty()) {
      *error = std::string("GPUPERF_UNWIND=") + unwind + " is not auto, table, fp or libunwind";
    }
  }
  ReadSwitch("GPUPERF_UNWIND_VERIFY", "1", "0", &config.unwind_verify, error);
  ReadSwitch("GPUPERF_PYTHON", "on", "off", &config.python_stacks, error);
  ReadSwitch("GPUPERF_NATIVE_STACKS", "inner", "full", &config.cut_native_at_python, error);
  ReadSwitch("GPUPERF_STACK_MEMO", "on", "off", &config.stack_memo, error);
  ReadSwitch("GPUPERF_HW_TRACE", "on", "off", &config.hw_trace, error);
  ReadSwitch("GPUPERF_LIVE", "on", "off", &config.live_page, error);
  uint64_t value = 0;
  if (ReadUint("GPUPERF_BUFFER_KB", &value, error) && value) config.buffer_bytes = value << 10;
  config.max_memory_bytes = DefaultMemoryCap(static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                             static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  value = 0;
  if (ReadUint("GPUPERF_MAX_MEMORY_MB", &value, error) && value) {
    config.max_memory_bytes = value << 20;
  }
  value = 0;
  if (ReadUint("GPUPERF_FLUSH_PERIOD_MS", &value, error) && value) {
    config.flush_period_ms = static_cast<uint32_t>(value);
  }
  value = config.cupti_flush_period_ms;
  if (ReadUint("GPUPERF_CUPTI_FLUSH_MS", &value, error)) {
    config.cupti_flush_period_ms = static_cast<uint32_t>(value);
  }
  value = 0;
  if (ReadUint("GPUPERF_STACK_DEPTH", &value, error) && value) {
    config.max_stack_depth = static_cast<uint32_t>(value > 256 ? 256 : value);
  }
  value = config.power_hz;
  if (ReadUint("GPUPERF_POWER_HZ", &value, error)) {
    config.power_hz = static_cast<uint32_t>(value > 1000 ? 1000 : value);
  }
  ReadUint("GPUPERF_DELAY_MS", &config.delay_ms, error);
  ReadUint("GPUPERF_DURATION_MS", &config.duration_ms, error);
  if (const char* dir = std::getenv("GPUPERF_SAVE_BUFFERS"); dir && *dir) {
    config.save_buffers_dir = dir;
  }
  ReadUint("GPUPERF_FLIGHT_MS", &config.flight_window_ms, error);
  value = 0;
  if (ReadUint("GPUPERF_FLIGHT_MEMORY_MB", &value, error) && value) {
    config.flight_memory_bytes = value << 20;
  }
  value = static_cast<uint64_t>(config.flight_signal);
  if (ReadUint("GPUPERF_FLIGHT_SIGNAL", &value, error)) {
    if (value < 65) {
      config.flight_signal = static_cast<int>(value);
    } else if (error->empty()) {
      *error = "GPUPERF_FLIGHT_SIGNAL=" + std::to_string(value) + " is not a signal number";
    }
  }
  ReadSwitch("GPUPERF_FLIGHT_ON_ERROR", "on", "off", &config.flight_on_error, error);
  value = 0;
  if (ReadUint("GPUPERF_SAMPLE_LAUNCHES", &value, error)) {
    config.sample_launches_per_s = static_cast<uint32_t>(std::min<uint64_t>(value, 1u << 30));
  }
  ReadHardwareSettings(config, error);
  // The flight ring keeps timed records of a window; PC samples and metric ranges are totals
  // of the run (record refuses the mix; this is for a hand-set environment).
  if (config.flight_window_ms && (config.pc_sampling || !config.metric_set.empty())) {
    config.pc_sampling = false;
    config.metric_set.clear();
    if (error->empty()) *error = "GPUPERF_FLIGHT_MS turns PC sampling and metrics off";
  }
  // Keep buffers sane: CUPTI needs room for at least a few records per buffer.
  if (config.buffer_bytes < (64u << 10)) config.buffer_bytes = 64u << 10;
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
