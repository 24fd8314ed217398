#include "analyze/symbols/python_stacks.h"

#include <algorithm>

namespace gpuperf {
namespace {

using NativeFrames = std::span<const Frame>;

// Where the eval loop is among one PC's frames (outermost first), or pc.size(). The frames
// inlined after it are the call machinery of the Python frame's call, so they go inside
// the Python frames.
size_t EvalLoopFrame(NativeFrames pc) {
  return static_cast<size_t>(
      std::find_if(pc.begin(), pc.end(),
                   [](const Frame& f) { return IsEvalLoopFunction(f.function); }) -
      pc.begin());
}

bool RunsPythonFrames(NativeFrames pc) {
  return EvalLoopFrame(pc) < pc.size();
}

// All frames of one PC are in the same module.
bool InInterpreter(NativeFrames pc) {
  return !pc.empty() && IsInterpreterModule(pc.front().module);
}

}  // namespace

bool IsEvalLoopFunction(std::string_view function) {
  return function == "_PyEval_EvalFrameDefault";
}

bool IsInterpreterModule(std::string_view module) {
  const size_t slash = module.rfind('/');
  if (slash != std::string_view::npos) module.remove_prefix(slash + 1);
  if (module.starts_with("libpython")) return true;
  // python, python3, python3.11, python3.13t; not python-config or pythonista.
  if (!module.starts_with("python")) return false;
  module.remove_prefix(6);
  return module.empty() || (module[0] >= '0' && module[0] <= '9');
}

bool IsAutogradThreadName(std::string_view thread_name) {
  return thread_name.starts_with("pt_autograd");
}

void MergePythonFrames(std::span<const NativeFrames> native,
                       std::span<const PythonStackFrame> python, bool python_internals,
                       std::vector<Frame>& out) {
  std::vector<Frame> merged;  // innermost first
  merged.reserve(python.size() + native.size() * 2);
  auto add_native = [&](NativeFrames pc) {
    for (size_t j = pc.size(); j-- > 0;) merged.push_back(pc[j]);
  };
  size_t next_python = 0;
  // The Python frames of one native eval call (`to_entry`), or all that are left.
  auto add_python = [&](bool to_entry) {
    while (next_python < python.size()) {
      const PythonStackFrame& frame = python[next_python++];
      merged.push_back(frame.frame);
      if (to_entry && frame.entry) break;
    }
  };
  const bool has_eval_frames = std::any_of(native.begin(), native.end(), RunsPythonFrames);
  // Without names for the eval loop: where the interpreter's frames begin.
  size_t anchor = native.size();
  if (!has_eval_frames) {
    anchor = static_cast<size_t>(std::find_if(native.begin(), native.end(), InInterpreter) -
                                 native.begin());
  }
  for (size_t i = 0; i < native.size(); ++i) {
    const NativeFrames pc = native[i];
    if (i == anchor) add_python(false);
    const bool shown = python_internals || !InInterpreter(pc);
    const size_t eval = has_eval_frames ? EvalLoopFrame(pc) : pc.size();
    if (eval == pc.size()) {
      if (shown) add_native(pc);
      continue;
    }
    if (shown) add_native(pc.subspan(eval + 1));
    add_python(true);
    if (shown) add_native(pc.first(eval + 1));
  }
  add_python(false);  // left over: the native stack was cut short of their eval frames
  out.insert(out.end(), merged.rbegin(), merged.rend());
}

}  // namespace gpuperf
