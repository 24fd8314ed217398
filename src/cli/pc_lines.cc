#include "cli/pc_lines.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "analyze/symbols/cubin_lines.h"
#include "analyze/symbols/sass_listing.h"
#include "base/demangle.h"
#include "base/hardware_advice.h"
#include "base/text_escape.h"
#include "gpuperf/trace_append.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

// What one trace file needs mapped: the sampled offsets of each (cubin, function).
struct Wanted {
  std::map<std::pair<uint64_t, std::string>, std::set<uint64_t>> offsets;
  std::map<uint64_t, std::string> cubin_files;  // crc -> path relative to the directory
  bool resolved = false;                        // lines were written before
};

class WantedSink final : public RecordSink {
 public:
  explicit WantedSink(Wanted& wanted) : wanted_(wanted) { strings_.emplace_back(); }
  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnPcSample(const PcSampleRecord& s) override {
    wanted_.offsets[{s.cubin_crc, Str(s.function)}].insert(s.pc_offset);
  }
  void OnCubin(const CubinRecord& c) override { wanted_.cubin_files[c.crc] = Str(c.file); }
  void OnSassLine(const SassLineRecord&) override { wanted_.resolved = true; }

 private:
  std::string Str(StringId id) const { return id < strings_.size() ? strings_[id] : std::string(); }
  Wanted& wanted_;
  std::vector<std::string> strings_;
};

std::optional<std::vector<uint8_t>> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  return bytes;
}

// nvdisasm, if this machine has it; GPUPERF_NVDISASM names it (or "none").
std::string FindNvdisasm() {
  if (const char* env = std::getenv("GPUPERF_NVDISASM"); env && *env) {
    return std::string(env) == "none" ? std::string() : std::string(env);
  }
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (!dir.empty()) candidates.push_back(dir + "/nvdisasm");
    }
  }
  if (const char* root = std::getenv("CUDA_ROOT"))
    candidates.push_back(std::string(root) + "/bin/nvdisasm");
  candidates.push_back("/usr/local/cuda/bin/nvdisasm");
  for (const std::string& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

// nvdisasm's listing of one cubin (empty when it fails).
std::string Disassemble(const std::string& nvdisasm, const std::string& cubin) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "";
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return "";
  }
  if (child == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::freopen("/dev/null", "w", stderr);
    ::execl(nvdisasm.c_str(), nvdisasm.c_str(), "-c", cubin.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : std::string();
}

struct Counts {
  uint64_t functions = 0;
  uint64_t with_lines = 0;
  std::set<std::string> without_lines;  // demangled
  uint64_t missing_cubins = 0;
  bool disassembled = false;
};

Status ResolveFile(const std::string& dir, const std::string& path, const std::string& nvdisasm,
                   Counts& counts) {
  Wanted wanted;
  WantedSink sink(wanted);
  ReadReport report;
  GP_RETURN_IF_ERROR(ReadTrace(path, sink, &report));
  // Still being recorded: its lines come when it is symbolized after its end (record's
  // symbolize step already said so, in one line).
  if (!report.being_recorded.empty()) return Status::Ok();
  if (wanted.offsets.empty() || wanted.resolved) return Status::Ok();

  std::vector<SassLineRecord> lines;
  auto writer_or = AppendToTrace(path);
  if (!writer_or.ok()) return writer_or.status();
  TraceWriter& writer = **writer_or;
  std::map<uint64_t, std::optional<CubinLineTable>> tables;
  std::map<uint64_t, SassListing> listings;
  for (const auto& [key, offsets] : wanted.offsets) {
    const auto& [crc, function] = key;
    ++counts.functions;
    auto [table_it, fresh] = tables.try_emplace(crc);
    if (fresh) {
      char name[40];
      std::snprintf(name, sizeof(name), "cubins/%016" PRIx64 ".cubin", crc);
      auto file = wanted.cubin_files.count(crc) ? wanted.cubin_files[crc] : std::string(name);
      const std::string cubin_path = dir + "/" + file;
      if (auto bytes = ReadFile(cubin_path)) {
        auto table = CubinLineTable::Parse(*bytes);
        if (table.ok()) table_it->second = std::move(*table);
        if (!nvdisasm.empty()) listings[crc] = ParseSassListing(Disassemble(nvdisasm, cubin_path));
      } else {
        ++counts.missing_cubins;
      }
    }
    const std::optional<CubinLineTable>& table = table_it->second;
    const bool has_lines = table && table->HasFunction(function);
    if (has_lines) {
      ++counts.with_lines;
    } else {
      counts.without_lines.insert(ShortName(Demangle(function)));
    }
    const StringId function_id = writer.InternString(function);
    auto write = [&](uint64_t offset, const std::string& instruction) {
      SassLineRecord record;
      record.cubin_crc = crc;
      record.function = function_id;
      record.pc_offset = offset;
      if (const SassLine* line = has_lines ? table->Find(function, offset) : nullptr) {
        record.file = writer.InternString(line->file);
        record.line = line->line;
      }
      record.instruction = instruction.empty() ? 0 : writer.InternString(instruction);
      if (record.line != 0 || record.instruction != 0) writer.AddSassLine(record);
    };
    auto listing = listings.find(crc);
    const std::map<uint64_t, std::string>* code = nullptr;
    if (listing != listings.end()) {
      auto f = listing->second.find(function);
      if (f != listing->second.end()) code = &f->second;
    }
    if (code != nullptr) {
      counts.disassembled = true;
      for (const auto& [offset, instruction] : *code) write(offset, instruction);
    } else {
      for (uint64_t offset : offsets) write(offset, "");
    }
  }
  return writer.Close();
}

}  // namespace

Status ResolvePcSampleLines(const std::string& dir, bool quiet) {
  std::error_code ec;
  const std::string nvdisasm = FindNvdisasm();
  Counts counts;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".gpt") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& path : files)
    GP_RETURN_IF_ERROR(ResolveFile(dir, path, nvdisasm, counts));
  if (quiet || counts.functions == 0) return Status::Ok();
  std::fprintf(stderr,
               "gpuperf: PC samples in %" PRIu64 " kernel(s): source lines for %" PRIu64
               " (from the cubins' line tables), SASS text %s\n",
               counts.functions, counts.with_lines,
               counts.disassembled ? ("from " + nvdisasm).c_str() : "not available (no nvdisasm)");
  for (const std::string& kernel : counts.without_lines) {
    std::fprintf(stderr, "gpuperf: %s\n", DisplayText(NoLineInfoLine(kernel)).c_str());
  }
  if (counts.missing_cubins) {
    std::fprintf(stderr,
                 "gpuperf: warning: %" PRIu64 " sampled cubin(s) were not saved in %s/cubins\n",
                 counts.missing_cubins, dir.c_str());
  }
  return Status::Ok();
}

}  // namespace gpuperf::cli
