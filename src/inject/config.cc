#include "inject/config.h"

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
  if (const char* source = std::getenv("GPUPERF_API_SOURCE"); source && *source) {
    if (std::strcmp(source, "cupti") == 0) {
      config.api_from_callbacks = false;
    } else if (std::strcmp(source, "callbacks") != 0 && error->empty()) {
      *error = std::string("GPUPERF_API_SOURCE=") + source + " is not cupti or callbacks";
    }
  }
  if (const char* unwind = std::getenv("GPUPERF_UNWIND"); unwind && *unwind) {
    if (std::strcmp(unwind, "libunwind") == 0) {
      config.frame_pointer_stacks = false;
    } else if (std::strcmp(unwind, "fp") != 0 && error->empty()) {
      *error = std::string("GPUPERF_UNWIND=") + unwind + " is not fp or libunwind";
    }
  }
  uint64_t value = 0;
  if (ReadUint("GPUPERF_BUFFER_KB", &value, error) && value) config.buffer_bytes = value << 10;
  value = 0;
  if (ReadUint("GPUPERF_MAX_MEMORY_MB", &value, error) && value) {
    config.max_memory_bytes = value << 20;
  }
  value = 0;
  if (ReadUint("GPUPERF_FLUSH_PERIOD_MS", &value, error) && value) {
    config.flush_period_ms = static_cast<uint32_t>(value);
  }
  value = 0;
  if (ReadUint("GPUPERF_STACK_DEPTH", &value, error) && value) {
    config.max_stack_depth = static_cast<uint32_t>(value > 256 ? 256 : value);
  }
  ReadUint("GPUPERF_DELAY_MS", &config.delay_ms, error);
  ReadUint("GPUPERF_DURATION_MS", &config.duration_ms, error);
  if (const char* dir = std::getenv("GPUPERF_SAVE_BUFFERS"); dir && *dir) {
    config.save_buffers_dir = dir;
  }
  // Keep buffers sane: CUPTI needs room for at least a few records per buffer.
  if (config.buffer_bytes < (64u << 10)) config.buffer_bytes = 64u << 10;
  if (config.max_memory_bytes < 2 * config.buffer_bytes) {
    config.max_memory_bytes = 2 * config.buffer_bytes;
  }
  return config;
}

}  // namespace gpuperf::inject
