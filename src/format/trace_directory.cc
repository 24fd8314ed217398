#include "format/trace_directory.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "format/chunk_view.h"
#include "format/file_format.h"
#include "format/record_codec.h"

namespace gpuperf::format {
namespace {

// pid, start and end of a file's first process record.
using ProcessIdentity = std::tuple<uint32_t, uint64_t, uint64_t>;

// The first process record of a trace's bytes, found by walking chunk headers (nothing
// else is decoded); none when the file is no trace, or is damaged before that record.
std::optional<ProcessIdentity> FirstProcess(std::span<const uint8_t> bytes) {
  if (bytes.size() < kFileHeaderSize ||
      std::memcmp(bytes.data(), kFileMagic, sizeof(kFileMagic)) != 0) {
    return std::nullopt;
  }
  std::vector<uint8_t> buffer;
  for (size_t pos = kFileHeaderSize; pos < bytes.size();) {
    ChunkView chunk;
    if (ChunkAtOffset(bytes, pos, chunk) != ChunkAt::kWhole) return std::nullopt;
    pos += chunk.whole.size();
    if (chunk.type != format::kProcessChunk) continue;
    std::span<const uint8_t> raw;
    if (!ChunkChecksumOk(chunk) || !ChunkRawBytes(chunk, buffer, raw)) return std::nullopt;
    ByteCursor in(raw.data(), raw.size());
    IdMaps no_names;  // the names do not matter here
    std::vector<ProcessRecord> processes;
    if (!DecodeFixed(in, chunk.record_count, no_names, processes) || processes.empty()) {
      return std::nullopt;
    }
    const ProcessRecord& first = processes.front();
    return ProcessIdentity{first.pid, first.start_ns, first.end_ns};
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<DirectoryTraceFile>> OpenTraceDirectory(const std::string& dir,
                                                           ReadReport& report,
                                                           Status& first_error) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    // Every *.gpt name is tried: one that is not a regular file is skipped with a
    // warning below, not silently.
    if (entry.path().extension() == ".gpt") paths.push_back(entry.path().string());
  }
  if (ec) return Error(StatusCode::kIoError, "cannot list " + dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());

  std::vector<DirectoryTraceFile> files;
  std::map<std::pair<dev_t, ino_t>, std::string> path_of_inode;  // the first name of each file
  std::map<ProcessIdentity, size_t> file_of_process;             // -> index in files
  auto leave_out = [&](const std::string& path, const std::string& why) {
    report.warnings.push_back("skipped " + path + ": " + why);
    ++report.files_duplicate;
  };
  for (const std::string& path : paths) {
    MappedFile file;
    if (Status status = file.Open(path); !status.ok()) {
      report.warnings.push_back("skipped " + status.message());
      ++report.files_skipped;
      if (first_error.ok()) first_error = status;
      continue;
    }
    auto [same_file, new_inode] = path_of_inode.try_emplace({file.device(), file.inode()}, path);
    if (!new_inode) {
      leave_out(path, "the same file as " + same_file->second + " (a link to it)");
      continue;
    }
    const std::optional<ProcessIdentity> process = FirstProcess(file.bytes());
    if (!process) {
      files.push_back({path, std::move(file)});
      continue;
    }
    auto [kept, first] = file_of_process.try_emplace(*process, files.size());
    if (first) {
      files.push_back({path, std::move(file), std::get<0>(*process)});
      continue;
    }
    const auto copy_of = [&](const std::string& other) {
      return "a copy of " + other + " (the trace of the same process, pid " +
             std::to_string(std::get<0>(*process)) + "): its records would count twice";
    };
    DirectoryTraceFile& other = files[kept->second];
    if (file.bytes().size() <= other.file.bytes().size()) {
      leave_out(path, copy_of(other.path));
    } else {
      leave_out(other.path, copy_of(path));
      other = DirectoryTraceFile{path, std::move(file), std::get<0>(*process)};
    }
  }
  return files;
}

}  // namespace gpuperf::format
