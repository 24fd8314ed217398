#include "analyze/symbols/symbol_table.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>

#include "analyze/symbols/python_stacks.h"
#include "analyze/symbols/pytorch_view.h"
#include "cpython/python_lines.h"
#include "gpuperf/kernel_frame_word.h"
#include "gpuperf/python_frame_word.h"
#include "gpuperf/stack_marker.h"

namespace gpuperf {
namespace {

Frame LabelFrame(std::string_view text) {
  Frame label;
  label.function = text;
  label.kind = FrameKind::kLabel;
  return label;
}

}  // namespace

std::string_view FileBaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string FrameWithLocation(const Frame& frame) {
  std::string text(frame.function);
  if (frame.file.empty()) return text;
  text += " (";
  text += FileBaseName(frame.file);
  if (frame.line != 0) text += ":" + std::to_string(frame.line);
  text += ')';
  return text;
}

bool IsKernelFrame(const Frame& frame) {
  const std::string_view m = frame.module;
  return m.size() > 2 && m.front() == '[' && m.back() == ']' && m != "[vdso]";
}

void SymbolTable::AddModule(const ModuleRecord& module) {
  auto& ranges = modules_[module.pid];
  ranges.push_back({module.start, module.end, module.load_bias, module.path});
  std::sort(ranges.begin(), ranges.end(),
            [](const ModuleRange& a, const ModuleRange& b) { return a.start < b.start; });
}

std::string_view SymbolTable::ModuleName(const ModuleRange& range) const {
  std::string_view path = Str(range.path);
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void SymbolTable::AddSymbol(const SymbolRecord& symbol) {
  symbols_[{symbol.pid, symbol.pc}] = symbol.frames;
}

const SymbolTable::ModuleRange* SymbolTable::FindModule(uint32_t pid, uint64_t pc) {
  auto it = modules_.find(pid);
  if (it == modules_.end()) return nullptr;
  const auto& ranges = it->second;
  auto after =
      std::upper_bound(ranges.begin(), ranges.end(), pc,
                       [](uint64_t value, const ModuleRange& r) { return value < r.start; });
  if (after == ranges.begin()) return nullptr;
  const ModuleRange& range = *(after - 1);
  return pc < range.end ? &range : nullptr;
}

std::string_view SymbolTable::Intern(std::string text) {
  owned_.push_back(std::make_unique<std::string>(std::move(text)));
  return *owned_.back();
}

void SymbolTable::Resolve(uint32_t pid, uint64_t pc, std::vector<Frame>& out) {
  auto it = symbols_.find({pid, pc});
  if (it != symbols_.end() && !it->second.empty()) {
    const auto& frames = it->second;  // innermost inline first, outlined function last
    bool have_names = false;
    for (const SymbolFrame& f : frames) have_names |= f.function != 0;
    if (have_names) {
      for (size_t i = frames.size(); i-- > 0;) {
        const SymbolFrame& f = frames[i];
        Frame frame;
        frame.function = f.function ? Str(f.function) : std::string_view("??");
        frame.file = Str(f.file);
        frame.line = f.line;
        frame.module = Str(f.module);
        frame.inlined = i != frames.size() - 1;
        frame.pc = pc;
        out.push_back(frame);
      }
      return;
    }
  }
  // No name: "module+0xoffset" (stable across runs of the same binary) or the raw PC.
  auto label = fallback_labels_.find({pid, pc});
  if (label == fallback_labels_.end()) {
    char buf[64];
    const ModuleRange* module = FindModule(pid, pc);
    std::string text;
    if (IsKernelFrameWord(pc)) {
      std::snprintf(buf, sizeof(buf), "[kernel] 0x%" PRIx64, KernelFramePc(pc));
      text = buf;
    } else if (module != nullptr) {
      std::snprintf(buf, sizeof(buf), "+0x%" PRIx64, pc - module->load_bias);
      text = std::string(ModuleName(*module)) + buf;
    } else {
      std::snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
      text = buf;
    }
    label = fallback_labels_.emplace(PcKey{pid, pc}, Intern(std::move(text))).first;
  }
  Frame frame;
  frame.function = label->second;
  frame.pc = pc;
  if (IsKernelFrameWord(pc)) {
    frame.module = "[kernel]";
  } else if (const ModuleRange* module = FindModule(pid, pc)) {
    frame.module = ModuleName(*module);
  }
  out.push_back(frame);
}

void SymbolTable::AddPythonCode(const PythonCodeRecord& code) {
  python_codes_[uint64_t{code.pid} << 32 | code.code_id] =
      PythonCode{code.name,       code.file,           code.first_line,     code.line_format,
                 code.line_table, code.python_version, code.first_traceable};
}

void SymbolTable::AddThread(const ThreadRecord& thread) {
  autograd_threads_[uint64_t{thread.pid} << 32 | thread.tid] =
      IsAutogradThreadName(Str(thread.name));
}

void SymbolTable::AddAll(std::span<const ModuleRecord> modules,
                         std::span<const SymbolRecord> symbols,
                         std::span<const PythonCodeRecord> python_codes,
                         std::span<const ThreadRecord> threads) {
  for (const ModuleRecord& module : modules) AddModule(module);
  for (const SymbolRecord& symbol : symbols) AddSymbol(symbol);
  for (const PythonCodeRecord& code : python_codes) AddPythonCode(code);
  for (const ThreadRecord& thread : threads) AddThread(thread);
}

Frame SymbolTable::PythonFrame(uint32_t pid, uint64_t word) const {
  Frame frame;
  frame.kind = FrameKind::kPython;
  auto it = python_codes_.find(uint64_t{pid} << 32 | PythonFrameCodeId(word));
  if (it == python_codes_.end()) {
    frame.function = "[unknown Python code]";
    return frame;
  }
  const PythonCode& code = it->second;
  frame.function = code.name == 0 ? std::string_view("[unnamed Python code]") : Str(code.name);
  frame.file = Str(code.file);
  const auto* table = reinterpret_cast<const uint8_t*>(code.line_table.data());
  const int line =
      ResolvePythonLine(static_cast<PyLineTableFormat>(code.line_format), code.first_line,
                        {table, code.line_table.size()}, PythonFrameInstruction(word));
  frame.line = line > 0 ? static_cast<uint32_t>(line) : 0;
  return frame;
}

bool SymbolTable::IsIncompletePythonFrame(uint32_t pid, uint64_t word) const {
  auto it = python_codes_.find(uint64_t{pid} << 32 | PythonFrameCodeId(word));
  if (it == python_codes_.end()) return false;  // shown as unknown code, not guessed away
  return PythonFrameIsIncomplete(it->second.python_version, it->second.first_traceable,
                                 PythonFrameInstruction(word), PythonFrameIsGenerator(word));
}

void SymbolTable::ResolveMixedStack(uint32_t pid, std::span<const uint64_t> pcs,
                                    std::vector<Frame>& out) {
  std::vector<Frame> native_frames;
  std::vector<std::pair<size_t, size_t>> pc_ranges;  // per native PC, innermost first
  std::vector<PythonStackFrame> python;
  for (uint64_t word : pcs) {
    if (IsPythonFrameWord(word)) {
      if (IsIncompletePythonFrame(pid, word)) {
        // Left out; the native eval call it began (if it did) ends at the frame inside it.
        if (PythonFrameIsEntry(word) && !python.empty()) python.back().entry = true;
        continue;
      }
      python.push_back({PythonFrame(pid, word), PythonFrameIsEntry(word)});
    } else {
      const size_t begin = native_frames.size();
      Resolve(pid, word, native_frames);
      pc_ranges.emplace_back(begin, native_frames.size());
    }
  }
  std::vector<std::span<const Frame>> native;
  native.reserve(pc_ranges.size());
  for (auto [begin, end] : pc_ranges)
    native.emplace_back(native_frames.data() + begin, end - begin);
  MergePythonFrames(native, python, options_.python_internals, out);
}

void SymbolTable::ResolveOwnFrames(uint32_t pid, std::span<const uint64_t> pcs,
                                   std::vector<Frame>& out) {
  // A stack whose Python frames are all incomplete reads as if it had none.
  auto shown_python = [&](uint64_t word) {
    return IsPythonFrameWord(word) && !IsIncompletePythonFrame(pid, word);
  };
  if (std::any_of(pcs.begin(), pcs.end(), shown_python)) {
    ResolveMixedStack(pid, pcs, out);
    return;
  }
  for (size_t i = pcs.size(); i-- > 0;) {
    if (!IsPythonFrameWord(pcs[i])) Resolve(pid, pcs[i], out);
  }
}

std::string_view SymbolTable::ViewName(std::string text) {
  auto it = view_names_.find(text);
  if (it != view_names_.end()) return it->second;
  const std::string_view kept = Intern(text);
  view_names_.emplace(std::move(text), kept);
  return kept;
}

void SymbolTable::ResolveStack(const StackRecord& stack, std::vector<Frame>& out, uint32_t tid) {
  const size_t start = out.size();
  ResolveStackFrames(stack, out, tid);
  if (!options_.native_detail) {
    FoldPyTorchFrames(out, start, [this](std::string text) { return ViewName(std::move(text)); });
  }
}

void SymbolTable::ResolveStackFrames(const StackRecord& stack, std::vector<Frame>& out,
                                     uint32_t tid) {
  if (stack.pcs.size() == 1 && stack.pcs[0] == kLaunchNotSampledWord) {
    out.push_back(LabelFrame(kLaunchNotSampledLabel));
    return;
  }
  const std::span<const uint64_t> pcs(stack.pcs);
  // A PyTorch backward launch that inherited its forward op's Python frames: those first
  // (Python frames alone: outermost first), then the label, then the launch's own frames.
  const auto marker = std::find(pcs.begin(), pcs.end(), kAutogradForwardWord);
  if (marker != pcs.end()) {
    const size_t at = static_cast<size_t>(marker - pcs.begin());
    ResolveOwnFrames(stack.pid, pcs.subspan(at + 1), out);
    out.push_back(LabelFrame(kAutogradBackwardLabel));
    ResolveOwnFrames(stack.pid, pcs.first(at), out);
    return;
  }
  if (tid != 0) {
    auto thread = autograd_threads_.find(uint64_t{stack.pid} << 32 | tid);
    if (thread != autograd_threads_.end() && thread->second) {
      out.push_back(LabelFrame(kAutogradBackwardLabel));
    }
  }
  ResolveOwnFrames(stack.pid, pcs, out);
}

}  // namespace gpuperf
