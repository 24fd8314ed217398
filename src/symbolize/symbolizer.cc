#include "symbolize/symbolizer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/ordered_work.h"
#include "format/file_format.h"
#include "gpuperf/kernel_frame_word.h"
#include "gpuperf/python_frame_word.h"
#include "gpuperf/stack_marker.h"
#include "gpuperf/trace_append.h"
#include "gpuperf/trace_lock.h"
#include "gpuperf/trace_reader.h"
#include "gpuperf/trace_writer.h"
#include "symbolize/elf_symbolizer.h"

namespace gpuperf {
namespace {

using PcKey = std::pair<uint32_t, uint64_t>;  // (pid, pc)

struct PcKeyHash {
  size_t operator()(const PcKey& key) const {
    return std::hash<uint64_t>{}(key.second * 0x9e3779b97f4a7c15ull ^ key.first);
  }
};

// What the symbolizer needs from a trace: the stacks, the module table and the symbols
// already there. Everything else streams past.
class StackAndModuleSink : public RecordSink {
 public:
  std::unordered_map<StringId, std::string> strings;
  std::vector<ModuleRecord> modules;
  // Distinct PCs -> whether any occurrence is a return address.
  std::unordered_map<PcKey, bool, PcKeyHash> pcs;
  std::unordered_set<PcKey, PcKeyHash> named;    // a SymbolRecord with a function name
  std::unordered_set<PcKey, PcKeyHash> unnamed;  // a SymbolRecord with module+offset only
  bool innermost_is_return_address = true;

  void OnString(StringId id, std::string_view text) override { strings[id] = std::string(text); }
  void OnStack(const StackRecord& stack) override {
    for (size_t i = 0; i < stack.pcs.size(); ++i) {
      // Python frames are code ids and markers stand for no frame, not addresses: the
      // analysis names them. Kernel frames were named by the recorder
      // (gpuperf/kernel_frame_word.h).
      const uint64_t word = stack.pcs[i];
      if (IsPythonFrameWord(word) || IsStackMarkerWord(word) || IsKernelFrameWord(word)) continue;
      bool return_address = i > 0 || innermost_is_return_address;
      auto [it, added] = pcs.emplace(PcKey{stack.pid, stack.pcs[i]}, return_address);
      if (!added) it->second = it->second || return_address;
    }
  }
  void OnSymbol(const SymbolRecord& symbol) override {
    bool has_name = std::any_of(symbol.frames.begin(), symbol.frames.end(),
                                [](const SymbolFrame& f) { return f.function != 0; });
    (has_name ? named : unnamed).insert({symbol.pid, symbol.pc});
  }
  void OnModule(std::span<const ModuleRecord> records) override {
    modules.insert(modules.end(), records.begin(), records.end());
  }

  std::string Str(StringId id) const {
    auto it = strings.find(id);
    return it == strings.end() ? std::string() : it->second;
  }
};

// Opened modules, shared by all files of a directory (the processes of one run load the
// same libraries). A module that failed to open is remembered as failed.
class ModuleCache {
 public:
  struct Entry {
    std::unique_ptr<ElfSymbolizer> elf;
    ElfOpenResult result = ElfOpenResult::kOk;
    std::string message;
    bool opened = false;
  };

  // The entry of a module, made (not yet opened) on first use. Entries stay where they
  // are as others are added.
  Entry& Slot(const std::string& path, const std::string& build_id, bool verify) {
    return cache_[std::make_pair(path, verify ? build_id : std::string())];
  }
  // Opens the module of `entry` unless an earlier file of the run did. Entries of different
  // modules may be opened on different threads at once.
  static void OpenIfNew(Entry& entry, const std::string& path, const std::string& build_id,
                        bool verify) {
    if (entry.opened) return;
    entry.opened = true;
    entry.elf =
        ElfSymbolizer::Open(path, verify ? build_id : std::string(), &entry.result, &entry.message);
  }

 private:
  std::map<std::pair<std::string, std::string>, Entry> cache_;
};

// The record (latest wins where a range was reused after dlclose) that contains the PC.
const ModuleRecord* FindModule(const std::vector<ModuleRecord>& modules, uint32_t pid,
                               uint64_t pc) {
  for (size_t i = modules.size(); i-- > 0;) {
    const ModuleRecord& m = modules[i];
    if (m.pid == pid && pc >= m.start && pc < m.end) return &m;
  }
  return nullptr;
}

// A resolved PC, with texts: the writer interns them once it is open.
struct PendingSymbol {
  uint32_t pid;
  uint64_t pc;
  uint64_t offset;  // in the module: pc - load bias
  std::string module_path;
  std::vector<ResolvedFrame> frames;
};

struct RunState {
  ModuleCache cache;
  std::set<std::pair<std::string, std::string>> counted_modules;  // (path, build-id)
};

// What the symbolizer reads of a trace: stacks, symbols and modules (and the strings they
// name). Kernels, API calls and the other records, nearly all of a trace, stay unread.
constexpr uint16_t kSymbolizerChunks[] = {format::kChunkStacks, format::kChunkSymbols,
                                          format::kModuleChunk};

// The work of one module: opening it (libdw's parsing of its symbol table and DWARF is
// most of a symbolization) and resolving its PCs. Modules are independent, so they are
// resolved on every core at once, each by one thread.
struct ModuleWork {
  ModuleCache::Entry* entry = nullptr;
  std::string path;
  std::string build_id;
  std::vector<size_t> items;  // indices into the file's work list, in order
};

Status SymbolizeOneFile(const std::string& path, const SymbolizeOptions& options, RunState& run,
                        SymbolizeSummary& summary) {
  StackAndModuleSink sink;
  sink.innermost_is_return_address = options.innermost_is_return_address;
  ReadReport report;
  GP_RETURN_IF_ERROR(ReadTraceChunks(path, kSymbolizerChunks, sink, &report));
  // Its writer is not done: symbols appended now would land among its chunks. It gets
  // them once it ends (AppendToTrace would refuse too; this says so before the work).
  if (!report.being_recorded.empty()) {
    return StillBeingRecorded(path, report.being_recorded.front().pid);
  }
  ++summary.files;

  // Sorted work list: deterministic output, and PCs of one module together.
  std::vector<std::pair<PcKey, bool>> work;
  for (const auto& [key, return_address] : sink.pcs) {
    ++summary.pcs;
    if (sink.named.count(key) != 0) {
      ++summary.already_symbolized;
      continue;
    }
    work.emplace_back(key, return_address);
  }
  std::sort(work.begin(), work.end());

  // Each PC's module record and its entry in `modules`, the modules in the order the sorted
  // work first meets them.
  std::vector<const ModuleRecord*> module_of(work.size());
  std::vector<size_t> module_at(work.size());
  std::vector<ModuleWork> modules;
  // By the cache's key: (path, build-id), or (path, "") when build-ids are not checked.
  std::map<std::pair<std::string, std::string>, size_t> module_index;
  for (size_t i = 0; i < work.size(); ++i) {
    const auto [pid, pc] = work[i].first;
    module_of[i] = FindModule(sink.modules, pid, pc);
    if (module_of[i] == nullptr) continue;
    const std::string build_id = sink.Str(module_of[i]->build_id);
    auto key = std::make_pair(sink.Str(module_of[i]->path),
                              options.verify_build_id ? build_id : std::string());
    auto [it, added] = module_index.emplace(key, modules.size());
    if (added) modules.push_back({nullptr, key.first, build_id, {}});
    module_at[i] = it->second;
    modules[it->second].items.push_back(i);
  }
  // Cache entries made here, on one thread; each is then opened by the one thread that
  // resolves its module.
  for (ModuleWork& m : modules)
    m.entry = &run.cache.Slot(m.path, m.build_id, options.verify_build_id);
  std::vector<std::vector<ResolvedFrame>> frames(work.size());
  RunInOrder(
      modules.size(), ProcessorCount() - 1, modules.size(),
      [&](size_t m, size_t) {
        ModuleWork& module = modules[m];
        run.cache.OpenIfNew(*module.entry, module.path, module.build_id, options.verify_build_id);
        if (module.entry->elf == nullptr) return;
        for (size_t i : module.items) {
          const uint64_t offset = work[i].first.second - module_of[i]->load_bias;
          // A return address points after the call; pc-1 lies inside the call instruction.
          module.entry->elf->Resolve(work[i].second ? offset - 1 : offset, frames[i]);
        }
      },
      [](size_t, size_t) {});

  // Counted and kept in the order of the sorted work, as one thread would.
  std::vector<PendingSymbol> pending_symbols;
  for (size_t i = 0; i < work.size(); ++i) {
    const auto [pid, pc] = work[i].first;
    const ModuleRecord* module = module_of[i];
    if (module == nullptr) {
      ++summary.outside_modules;
      continue;
    }
    std::string module_path = sink.Str(module->path);
    std::string build_id = sink.Str(module->build_id);
    const ModuleCache::Entry& entry = *modules[module_at[i]].entry;
    if (run.counted_modules.emplace(module_path, build_id).second) {
      ++summary.modules_used;
      switch (entry.result) {
        case ElfOpenResult::kOk:
          break;
        case ElfOpenResult::kMissing:
          ++summary.modules_missing;
          // The vdso and similar have no file: expected, not worth a warning.
          if (!module_path.empty() && module_path[0] == '/')
            summary.warnings.push_back(entry.message);
          break;
        case ElfOpenResult::kUnreadable:
          ++summary.modules_unreadable;
          summary.warnings.push_back(entry.message);
          break;
        case ElfOpenResult::kBuildIdMismatch:
          ++summary.modules_build_id_mismatch;
          summary.warnings.push_back(entry.message);
          break;
      }
    }

    const uint64_t offset = pc - module->load_bias;
    PendingSymbol pending{pid, pc, offset, std::move(module_path), std::move(frames[i])};
    if (pending.frames.empty()) {
      ++summary.unresolved;
      // Retried and still nothing: the module+offset record is already there.
      if (sink.unnamed.count(work[i].first) != 0) continue;
    } else if (pending.frames.front().file.empty()) {
      ++summary.function_only;
    } else {
      ++summary.with_source;
    }
    pending_symbols.push_back(std::move(pending));
  }
  if (pending_symbols.empty()) return Status::Ok();

  GP_ASSIGN_OR_RETURN(std::unique_ptr<TraceWriter> writer, AppendToTrace(path));
  for (const PendingSymbol& pending : pending_symbols) {
    SymbolRecord record;
    record.pid = pending.pid;
    record.pc = pending.pc;
    StringId module = writer->InternString(pending.module_path);
    for (const ResolvedFrame& f : pending.frames) {
      record.frames.push_back({writer->InternString(f.function), writer->InternString(f.file),
                               f.line, module, pending.offset});
    }
    if (pending.frames.empty()) record.frames.push_back({0, 0, 0, module, pending.offset});
    writer->AddSymbol(record);
    ++summary.symbols_written;
  }
  return writer->Close();
}

}  // namespace

Status SymbolizeTraceFile(const std::string& path, const SymbolizeOptions& options,
                          SymbolizeSummary* summary) {
  SymbolizeSummary local;
  SymbolizeSummary& out = summary != nullptr ? *summary : local;
  RunState run;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    Status status = SymbolizeOneFile(path, options, run, out);
    if (status.code() == StatusCode::kBusy) {
      return Error(status.code(), status.message() + ": symbolize it when it ends");
    }
    return status;
  }

  std::vector<std::string> files;
  for (const auto& item : std::filesystem::directory_iterator(path, ec)) {
    if (item.path().extension() == ".gpt" && item.is_regular_file(ec)) {
      files.push_back(item.path().string());
    }
  }
  if (ec) return Error(StatusCode::kIoError, "cannot list " + path + ": " + ec.message());
  if (files.empty()) return Error(StatusCode::kNotFound, path + " holds no .gpt trace files");
  std::sort(files.begin(), files.end());
  // One bad file does not stop the others; the first failure is returned. A file still
  // being recorded is no failure: it is left for later, with one line.
  Status first_error;
  for (const std::string& file : files) {
    Status status = SymbolizeOneFile(file, options, run, out);
    if (status.code() == StatusCode::kBusy) {
      out.warnings.push_back("skipped " + status.message() + ": symbolize it when it ends");
      ++out.files_being_recorded;
    } else if (!status.ok() && first_error.ok()) {
      first_error = status;
    }
  }
  return first_error;
}

std::string SymbolizeSummary::ToString() const {
  std::string where = files > 1 ? " in " + std::to_string(files) + " files" : "";
  if (pcs == already_symbolized) {
    return "nothing to do" + where + ": all " + std::to_string(pcs) + " PCs already symbolized";
  }
  std::string text = "symbolized " + std::to_string(pcs - already_symbolized) + " PCs" + where;
  text += ": " + std::to_string(with_source) + " with source lines, " +
          std::to_string(function_only) + " function names only, " + std::to_string(unresolved) +
          " unresolved (module+offset)";
  if (outside_modules > 0) text += ", " + std::to_string(outside_modules) + " outside every module";
  if (already_symbolized > 0) {
    text += "; " + std::to_string(already_symbolized) + " already symbolized";
  }
  uint64_t skipped = modules_missing + modules_build_id_mismatch + modules_unreadable;
  if (skipped > 0) {
    text += "; " + std::to_string(skipped) + " of " + std::to_string(modules_used) +
            " modules skipped (";
    std::string sep;
    if (modules_missing > 0) text += std::to_string(modules_missing) + " missing", sep = ", ";
    if (modules_build_id_mismatch > 0) {
      text += sep + std::to_string(modules_build_id_mismatch) + " build-id mismatch", sep = ", ";
    }
    if (modules_unreadable > 0) text += sep + std::to_string(modules_unreadable) + " unreadable";
    text += ")";
  }
  return text;
}

}  // namespace gpuperf
