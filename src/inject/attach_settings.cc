#include "inject/attach_settings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpuperf::inject {
namespace {

bool ReadUnsigned(const std::map<std::string, std::string>& values, const char* name, uint64_t* out,
                  std::string* error) {
  auto it = values.find(name);
  if (it == values.end()) return true;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno != 0) {
    *error = std::string(name) + "=" + it->second + " is not a number";
    return false;
  }
  *out = value;
  return true;
}

}  // namespace

bool ParseAttachSettings(const char* text, AttachSettings* settings, std::string* error) {
  if (text == nullptr) {
    *error = "no settings";
    return false;
  }
  for (const char* line = text; *line != '\0';) {
    const char* newline = std::strchr(line, '\n');
    const std::string entry(line,
                            newline ? static_cast<size_t>(newline - line) : std::strlen(line));
    line = newline ? newline + 1 : line + entry.size();
    if (entry.empty()) continue;
    const size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) {
      *error = "not NAME=VALUE: " + entry;
      return false;
    }
    settings->values[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  uint64_t protocol = 0, injector = 0;
  if (!ReadUnsigned(settings->values, kAttachProtocolSetting, &protocol, error) ||
      !ReadUnsigned(settings->values, kAttachInjectorSetting, &injector, error) ||
      !ReadUnsigned(settings->values, kAttachAtSetting, &settings->at_realtime_ns, error) ||
      !ReadUnsigned(settings->values, kAttachDurationSetting, &settings->duration_ms, error) ||
      !ReadUnsigned(settings->values, kAttachGraceSetting, &settings->grace_ms, error)) {
    return false;
  }
  if (protocol != kAttachProtocol) {
    *error = "attach protocol " + std::to_string(protocol) + ", this library speaks " +
             std::to_string(kAttachProtocol);
    return false;
  }
  settings->injector_pid = static_cast<uint32_t>(injector);
  auto path = [&](const char* name, std::string* out) {
    auto it = settings->values.find(name);
    if (it == settings->values.end() || it->second.empty() || it->second[0] != '/') {
      *error = std::string(name) + " must be an absolute path";
      return false;
    }
    *out = it->second;
    return true;
  };
  return path(kAttachStateSetting, &settings->state_path) &&
         path(kAttachStopSetting, &settings->stop_path) &&
         path(kAttachLogSetting, &settings->log_path);
}

Config AttachConfig(const AttachSettings& settings, std::string* error) {
  Config config = ReadConfig(
      [&settings](const char* name) -> const char* {
        auto it = settings.values.find(name);
        return it == settings.values.end() ? nullptr : it->second.c_str();
      },
      error);
  // The window is the attach's own (AttachSettings), and what needs the library from
  // cuInit on, or leaves something behind in the program, is not for a running process: no
  // live page, no signal handler of ours, no hardware profilers (their sessions begin with
  // the process), kernel times as CUPTI takes them.
  config.delay_ms = 0;
  config.duration_ms = 0;
  config.live_page = false;
  config.flight_signal = 0;
  config.metric_set.clear();
  config.pc_sampling = false;
  config.hw_trace = false;
  return config;
}

}  // namespace gpuperf::inject
