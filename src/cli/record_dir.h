// The directory a recording writes its traces into (`record`, `attach`): made when missing,
// never mixed with an earlier recording's traces.
#pragma once

#include <string>

#include "cli/record_options.h"
#include "gpuperf/status.h"

namespace gpuperf::cli {

// Trace files in `dir`, but `except` (the CPU profiler's own file).
bool HasTraceFiles(const std::string& dir, const std::string& except = "");

// options.output_dir, made and checked writable; or, without one, gpuperf-<stem> (numbered
// when a directory of that name holds traces already). A given directory that holds traces
// is refused, or emptied with --force (never while a process still writes one). Its absolute
// path.
Result<std::string> PrepareOutputDir(const RecordOptions& options, const std::string& stem);

}  // namespace gpuperf::cli
