#include "analyze/symbol_table.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>

namespace gpuperf {

void SymbolTable::AddModule(const ModuleRecord& module) {
  std::string_view path = Str(module.path);
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto& ranges = modules_[module.pid];
  ranges.push_back({module.start, module.end, module.load_bias, name});
  std::sort(ranges.begin(), ranges.end(),
            [](const ModuleRange& a, const ModuleRange& b) { return a.start < b.start; });
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
    if (module != nullptr) {
      std::snprintf(buf, sizeof(buf), "+0x%" PRIx64, pc - module->load_bias);
      text = std::string(module->name) + buf;
    } else {
      std::snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
      text = buf;
    }
    label = fallback_labels_.emplace(PcKey{pid, pc}, Intern(std::move(text))).first;
  }
  Frame frame;
  frame.function = label->second;
  if (const ModuleRange* module = FindModule(pid, pc)) frame.module = module->name;
  out.push_back(frame);
}

void SymbolTable::ResolveStack(const StackRecord& stack, std::vector<Frame>& out) {
  for (size_t i = stack.pcs.size(); i-- > 0;) Resolve(stack.pid, stack.pcs[i], out);
}

}  // namespace gpuperf
