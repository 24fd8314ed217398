#include "cli/other_profilers.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace gpuperf::cli {
namespace {

struct KnownTool {
  const char* executable;
  const char* name;
};

// Executables that inject themselves into the CUDA program they run.
constexpr KnownTool kProfilerExecutables[] = {
    {"ncu", "Nsight Compute (ncu)"},
    {"nv-nsight-cu-cli", "Nsight Compute (nv-nsight-cu-cli)"},
    {"nsys", "Nsight Systems (nsys)"},
    {"compute-sanitizer", "Compute Sanitizer"},
};

// Variables the Nsight tools' process-tree launcher sets in every process it follows
// (seen under ncu 2025.3 on CUDA 13.0).
constexpr const char* kNsightLauncherVariables[] = {"NV_TPS_LAUNCH_TOKEN",
                                                    "NV_NSIGHT_INJECTION_TRANSPORT_TYPE"};

std::string ToolOfLibrary(const std::string& path) {
  if (path.find("nsight-compute") != std::string::npos) return "Nsight Compute (ncu)";
  if (path.find("nsight-systems") != std::string::npos ||
      path.find("ToolsInjection") != std::string::npos) {
    return "Nsight Systems (nsys)";
  }
  if (path.find("sanitizer") != std::string::npos) return "Compute Sanitizer";
  return "another CUDA tool (" + path + ")";
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || std::filesystem::equivalent(a, b, ec);
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// An argument that names a program: ncu's and nsys's own options come before it, some with
// values ("-c 3"), so the first word that runs is the application.
bool IsProgram(const std::string& word) {
  auto runnable = [](const std::string& path) {
    struct stat info;
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           access(path.c_str(), X_OK) == 0;
  };
  if (word.empty() || word[0] == '-') return false;
  if (word.find('/') != std::string::npos) return runnable(word);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    if (end > start && runnable(dirs.substr(start, end - start) + "/" + word)) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::optional<OtherProfiler> FindOtherProfiler(const std::vector<std::string>& command,
                                               const std::string& our_library,
                                               const EnvLookup& getenv_fn) {
  if (!command.empty()) {
    const std::string program = BaseName(command[0]);
    for (const KnownTool& tool : kProfilerExecutables) {
      if (program == tool.executable) return OtherProfiler{tool.name, "the command is " + program};
    }
  }
  for (const char* variable : kNsightLauncherVariables) {
    if (const char* value = getenv_fn(variable); value != nullptr) {
      return OtherProfiler{"an Nsight tool", std::string(variable) + " is set"};
    }
  }
  const char* injected = getenv_fn("CUDA_INJECTION64_PATH");
  if (injected != nullptr && *injected != '\0' && !SameFile(injected, our_library) &&
      BaseName(injected) != BaseName(our_library)) {
    return OtherProfiler{ToolOfLibrary(injected), std::string("CUDA_INJECTION64_PATH=") + injected};
  }
  return std::nullopt;
}

std::string StepAsideLine(const OtherProfiler& other, const std::vector<std::string>& command) {
  std::string app;
  // Without the other tool's own executable and options, the rest is the program to record.
  size_t first = 0;
  if (!command.empty() && other.evidence == "the command is " + BaseName(command[0])) {
    first = command.size();
    for (size_t i = 1; i < command.size(); ++i) {
      if (IsProgram(command[i])) {
        first = i;
        break;
      }
    }
  }
  for (size_t i = first; i < command.size(); ++i) app += (app.empty() ? "" : " ") + command[i];
  if (app.empty()) app = "./app";
  return "gpuperf: " + other.tool + " is profiling this command (" + other.evidence +
         "); CUDA takes one injected profiler per process, so gpuperf steps aside and records "
         "nothing. Use one at a time: gpuperf record -- " +
         app;
}

}  // namespace gpuperf::cli
