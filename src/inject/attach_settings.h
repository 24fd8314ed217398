// What `gpuperf attach` hands the injection library in a running process
// (gpuperf_attach_start's argument, docs/attach.md): the same GPUPERF_* settings `record`
// puts in the environment, plus the attach window's own, one NAME=VALUE per line.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gpuperf/attach_protocol.h"
#include "inject/config.h"

namespace gpuperf::inject {

struct AttachSettings {
  std::map<std::string, std::string> values;  // every NAME=VALUE line
  std::string state_path;     // GPUPERF_ATTACH_STATE: where the window says how it goes
  std::string stop_path;      // GPUPERF_ATTACH_STOP: made by gpuperf to end the window early
  std::string log_path;       // GPUPERF_ATTACH_LOG: the library's lines (not the program's stderr)
  uint32_t injector_pid = 0;  // GPUPERF_ATTACH_INJECTOR: the window ends if it is gone
  uint64_t at_realtime_ns = 0;  // GPUPERF_ATTACH_AT_NS: CLOCK_REALTIME start (0: at once)
  uint64_t duration_ms = 0;     // GPUPERF_ATTACH_DURATION_MS (0: until stopped)
  uint64_t grace_ms = kDefaultAttachGraceMs;  // GPUPERF_ATTACH_GRACE_MS (attach --grace)
};

// Parses `text`; false (with `error`) on a malformed line, a missing path or another
// protocol version.
bool ParseAttachSettings(const char* text, AttachSettings* settings, std::string* error);

// The recording settings among them, as `record`'s environment would give them.
Config AttachConfig(const AttachSettings& settings, std::string* error);

}  // namespace gpuperf::inject
