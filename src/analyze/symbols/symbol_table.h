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

enum class FrameKind : uint8_t {
  kNative,  // a function at a PC
  kPython,  // a Python function; file and line of the instruction it was running
  kLabel,   // a frame gpuperf adds ("[autograd backward]")
};

struct Frame {
  std::string_view function;  // demangled; for unresolved PCs "module+0xoffset" or "0xpc";
                              // the qualified name of a Python function
  std::string_view file;      // empty when unknown
  uint32_t line = 0;
  std::string_view module;  // file name of the module, empty when unknown
  bool inlined = false;     // an inlined call inside the next frame's function
  FrameKind kind = FrameKind::kNative;
  uint64_t pc = 0;  // native frames: the recorded PC they resolve (inlined frames share it)
};

struct StackDisplayOptions {
  // Keep the interpreter's own native frames (the eval loop, call machinery) in stacks
  // that have Python frames (analyze/symbols/python_stacks.h).
  bool python_internals = false;
  // Every frame as recorded: no PyTorch view (analyze/symbols/pytorch_view.h).
  bool native_detail = false;
};

// "function (file.py:87)": the function with the base name of its file and its line, or
// the function alone when the file is unknown. How stack listings show a frame.
std::string FrameWithLocation(const Frame& frame);
// What follows the last '/' of `path`: the file name stack listings show.
std::string_view FileBaseName(std::string_view path);

// A function of the operating system kernel (CPU samples, gpuperf/kernel_frame_word.h):
// its module reads "[kernel]" or "[<kernel module>]".
bool IsKernelFrame(const Frame& frame);

class SymbolTable {
 public:
  // `strings` must outlive the table (Trace::strings, or a streaming sink's table).
  explicit SymbolTable(const std::vector<std::string>& strings, StackDisplayOptions options = {})
      : strings_(strings), options_(options) {}

  void AddModule(const ModuleRecord& module);
  void AddSymbol(const SymbolRecord& symbol);
  void AddPythonCode(const PythonCodeRecord& code);
  void AddThread(const ThreadRecord& thread);
  // Everything a trace says about names, in one call.
  void AddAll(std::span<const ModuleRecord> modules, std::span<const SymbolRecord> symbols,
              std::span<const PythonCodeRecord> python_codes,
              std::span<const ThreadRecord> threads);

  // Appends the frames of one PC, outermost first (the containing function, then the
  // functions inlined into it, innermost last).
  void Resolve(uint32_t pid, uint64_t pc, std::vector<Frame>& out);

  // Appends the frames of a whole stack (pcs innermost first, as recorded), outermost
  // first: the order of folded stacks and flame graphs. The one place where a stack
  // becomes display frames: Python frames are merged into the native ones, and stacks of
  // thread `tid` (0: unknown) get a root label where the thread says what they are
  // (analyze/symbols/python_stacks.h). A backward launch that inherited its forward op's Python
  // frames (gpuperf/stack_marker.h kAutogradForwardWord) shows those, then the label.
  void ResolveStack(const StackRecord& stack, std::vector<Frame>& out, uint32_t tid = 0);

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
    StringId path;  // an id, not a view: a streaming sink's table still grows (and moves)
  };
  std::string_view ModuleName(const ModuleRange& range) const;  // the path's base name

  std::string_view Str(StringId id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }
  struct PythonCode {
    StringId name = 0, file = 0;  // ids, not views: a streaming sink's table still grows
    int32_t first_line = 0;
    uint8_t line_format = 0;
    std::string line_table;
    uint32_t python_version = 0, first_traceable = 0;
  };

  const ModuleRange* FindModule(uint32_t pid, uint64_t pc);
  std::string_view Intern(std::string text);
  Frame PythonFrame(uint32_t pid, uint64_t word) const;
  // A frame CPython would not show (python_lines.h PythonFrameIsIncomplete).
  bool IsIncompletePythonFrame(uint32_t pid, uint64_t word) const;
  // A stack's own frames (no label), Python frames merged where it has them.
  void ResolveOwnFrames(uint32_t pid, std::span<const uint64_t> pcs, std::vector<Frame>& out);
  void ResolveMixedStack(uint32_t pid, std::span<const uint64_t> pcs, std::vector<Frame>& out);

  const std::vector<std::string>& strings_;
  StackDisplayOptions options_;
  std::unordered_map<uint64_t, PythonCode> python_codes_;  // (pid << 32 | code id)
  std::unordered_map<uint64_t, bool> autograd_threads_;    // (pid << 32 | tid)
  std::unordered_map<PcKey, std::vector<SymbolFrame>, PcKeyHash> symbols_;
  std::unordered_map<uint32_t, std::vector<ModuleRange>> modules_;  // sorted by start
  std::unordered_map<PcKey, std::string_view, PcKeyHash> fallback_labels_;
  std::vector<std::unique_ptr<std::string>> owned_;  // labels we made up
  // The PyTorch view's frame names (aten::linear, [libcublasLt]), each kept once.
  std::unordered_map<std::string, std::string_view> view_names_;
  std::string_view ViewName(std::string text);
  void ResolveStackFrames(const StackRecord& stack, std::vector<Frame>& out, uint32_t tid);
};

}  // namespace gpuperf
