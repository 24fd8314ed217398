// Resolves the program counters of recorded stacks to readable frames, using the
// symbols `record` stored in the trace and, for PCs without symbols, the module table
// ("libfoo.so+0x1234"). Works on a loaded Trace or fed record by record while streaming.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf {

struct Frame {
  std::string_view function;  // demangled; for unresolved PCs "module+0xoffset" or "0xpc"
  std::string_view file;      // empty when unknown
  uint32_t line = 0;
  std::string_view module;  // file name of the module, empty when unknown
  bool inlined = false;     // an inlined call inside the next frame's function
};

class SymbolTable {
 public:
  // `strings` must outlive the table (Trace::strings, or a streaming sink's table).
  explicit SymbolTable(const std::vector<std::string>& strings) : strings_(strings) {}

  void AddModule(const ModuleRecord& module);
  void AddSymbol(const SymbolRecord& symbol);

  // Appends the frames of one PC, outermost first (the containing function, then the
  // functions inlined into it, innermost last).
  void Resolve(uint32_t pid, uint64_t pc, std::vector<Frame>& out);

  // Appends the frames of a whole stack (pcs innermost first, as recorded), outermost
  // first: the order of folded stacks and flame graphs.
  void ResolveStack(const StackRecord& stack, std::vector<Frame>& out);

  size_t symbol_count() const { return symbols_.size(); }

 private:
  struct PcKey {
    uint32_t pid;
    uint64_t pc;
    bool operator==(const PcKey&) const = default;
  };
  struct PcKeyHash {
    size_t operator()(const PcKey& key) const {
      return std::hash<uint64_t>{}(key.pc * 31 + key.pid);
    }
  };
  struct ModuleRange {
    uint64_t start, end, load_bias;
    std::string_view name;  // basename of the path
  };

  std::string_view Str(StringId id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }
  const ModuleRange* FindModule(uint32_t pid, uint64_t pc);
  std::string_view Intern(std::string text);

  const std::vector<std::string>& strings_;
  std::unordered_map<PcKey, std::vector<SymbolFrame>, PcKeyHash> symbols_;
  std::unordered_map<uint32_t, std::vector<ModuleRange>> modules_;  // sorted by start
  std::unordered_map<PcKey, std::string_view, PcKeyHash> fallback_labels_;
  std::vector<std::unique_ptr<std::string>> owned_;  // labels we made up
};

}  // namespace gpuperf
