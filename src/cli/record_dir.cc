#include "cli/record_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "gpuperf/trace_lock.h"

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

// record --force: removes the traces in `dir`, or, while a process still writes one of them
// (a recording in progress), none. Every file is held first (trace_lock.h), so that no
// writer can start on one between the look and the removal.
Status RemoveFinishedTraces(const std::string& dir) {
  std::vector<std::pair<fs::path, int>> held;
  auto let_go = [&held] {
    for (const auto& [path, fd] : held) {
      if (fd >= 0) close(fd);
    }
  };
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".gpt") continue;
    const std::string path = entry.path().string();
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    held.emplace_back(entry.path(), fd);
    if (fd < 0) continue;  // not ours to ask: removed as before
    if (Status free = HoldTraceFile(fd, path); free.code() == StatusCode::kBusy) {
      let_go();
      return Error(StatusCode::kBusy, "--force removes no recording still in progress: " +
                                          free.message() + "; nothing removed");
    }
  }
  for (const auto& [path, fd] : held) fs::remove(path, ec);
  let_go();
  return Status::Ok();
}

}  // namespace

bool HasTraceFiles(const std::string& dir, const std::string& except) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".gpt" && entry.path().filename() != except) return true;
  }
  return false;
}

Result<std::string> PrepareOutputDir(const RecordOptions& options, const std::string& stem) {
  std::string dir = options.output_dir;
  std::error_code ec;
  if (dir.empty()) {
    // Never mix two runs: the default name gets a number when taken.
    const std::string base = "gpuperf-" + stem;
    dir = base;
    for (int n = 2; fs::exists(dir, ec) && HasTraceFiles(dir); ++n) {
      dir = base + "-" + std::to_string(n);
    }
  } else if (fs::exists(dir, ec) && HasTraceFiles(dir)) {
    if (!options.force) {
      return Error(StatusCode::kInvalidArgument,
                   "output directory " + dir +
                       " already holds a recording; choose another -o or pass --force");
    }
    GP_RETURN_IF_ERROR(RemoveFinishedTraces(dir));
  }
  fs::create_directories(dir, ec);
  std::error_code is_dir_error;  // a parent we may not search: an error, not an exception
  if (!fs::is_directory(dir, is_dir_error) || access(dir.c_str(), W_OK) != 0) {
    return Error(StatusCode::kIoError, "output directory " + dir + " is not writable" +
                                           (ec ? ": " + ec.message() : std::string()));
  }
  return fs::absolute(dir, ec).lexically_normal().string();
}

}  // namespace gpuperf::cli
