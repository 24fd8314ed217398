#include "format/trace_files.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "base/ordered_work.h"
#include "format/trace_directory.h"

namespace gpuperf {

Result<std::vector<std::string>> TraceFilesOf(const std::string& path, ReadReport& report) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    files.push_back(path);
    return files;
  }
  Status first_error;
  GP_ASSIGN_OR_RETURN(std::vector<format::DirectoryTraceFile> entries,
                      format::OpenTraceDirectory(path, report, first_error));
  for (const format::DirectoryTraceFile& entry : entries) files.push_back(entry.path);
  if (files.empty()) {
    if (!first_error.ok()) return first_error;
    return Error(StatusCode::kNotFound, path + " holds no trace files (*.gpt)");
  }
  return files;
}

void ForEachIndex(size_t count, unsigned threads, const std::function<void(size_t)>& task) {
  if (count == 0) return;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) task(i);
  };
  if (threads == 0) threads = ProcessorCount();
  threads = static_cast<unsigned>(std::min<size_t>(threads, count));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

unsigned ReadThreadsPerFile(size_t files) {
  return static_cast<unsigned>(std::max<size_t>(1, ProcessorCount() / std::max<size_t>(files, 1)));
}

}  // namespace gpuperf
