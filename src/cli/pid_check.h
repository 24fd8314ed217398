// `--pid N` of the commands that read a trace: a pid the trace does not hold would give an
// empty report (or flame graph) that looks like a process that did nothing. It is an error
// that lists the pids there are.
#pragma once

#include <cstdint>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf::cli {

// OK when `trace` (a file or directory) recorded process `pid`, and when the trace cannot be
// read (the command's own read says why).
Status CheckPidRecorded(const std::string& trace, uint32_t pid);

}  // namespace gpuperf::cli
