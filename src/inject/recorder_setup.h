// The parts of starting a recording that `record` (injection.cc: CUDA loads the library at
// cuInit) and `attach` (attach_window.cc: gpuperf loads it into a running process) share:
// what the trace says about the process, where it goes and the launch-stack settings.
// CUPTI-free: the wiring (injection.cc, attach_window.cc) reaches CUPTI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpuperf/records.h"
#include "inject/record_batch.h"
#include "inject/recorder.h"

namespace gpuperf::inject {

// The process record of `r`'s trace: pid, parent, command line, host, gpuperf's version and
// r.start_ns. `command` receives the command line as one string.
ProcessRecord DescribeProcess(Recorder& r, std::string* command = nullptr);

// <dir>/<program>.<pid>.gpt, the directory made first; a name already taken (an image that
// exec'd under the same pid, an earlier attach window) gets -2, -3, ... before .gpt.
std::string NewTracePath(const std::string& dir, uint32_t pid);

// This process's place in a distributed job (rank_identity.h), as a batch for the writer.
std::unique_ptr<RecordBatch> RankBatch(Recorder& r);

// Launch-stack capture as `config` asks (a no-op without stacks).
void InitStacksFor(const Config& config);

}  // namespace gpuperf::inject
