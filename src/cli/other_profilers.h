// CUDA loads one injected tool per process (CUDA_INJECTION64_PATH), and Nsight Compute refuses to
// run when that variable names someone else's library. So gpuperf and another CUDA profiler cannot
// both watch one process: this finds the other one before `record` starts anything.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuperf::cli {

struct OtherProfiler {
  std::string tool;      // "Nsight Compute (ncu)", or the injected library's path
  std::string evidence;  // what gave it away, e.g. "NV_TPS_LAUNCH_TOKEN is set"
};

using EnvLookup = std::function<const char*(const char*)>;

// The CUDA profiler that would lose (or break) if gpuperf injected itself into `command`: the
// command is one (`gpuperf record -- ncu ./app`), gpuperf runs inside one (`ncu gpuperf record --
// ./app`), or CUDA_INJECTION64_PATH already names a library other than `our_library`.
std::optional<OtherProfiler> FindOtherProfiler(const std::vector<std::string>& command,
                                               const std::string& our_library,
                                               const EnvLookup& getenv_fn);

// The one line `record` prints when it steps aside, ending with the command that fixes it.
std::string StepAsideLine(const OtherProfiler& other, const std::vector<std::string>& command);

}  // namespace gpuperf::cli
