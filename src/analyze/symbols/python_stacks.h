// One launch stack out of native and Python frames.
//
// A recorded stack holds the native PCs and then the launching thread's Python frames
// (gpuperf/python_frame_word.h), each innermost first. The CPython evaluation loop,
// _PyEval_EvalFrameDefault, is one native frame per call; each call runs one or more
// Python frames (3.11 and later run a pure-Python call inside the same native call). The
// walker flags the outermost Python frame of each native call (the entry frame). So,
// innermost first, the Python frames up to and including the first entry frame ran in the
// innermost native eval frame, the frames up to the next entry frame in the next one, and
// so on; each eval frame is replaced by the Python frames it ran. Python frames left over
// (the native stack was cut at its depth limit) go outermost. Without any eval frame (the
// interpreter has no symbols), the Python frames go where the interpreter's own frames
// begin (the innermost frame of an interpreter module), or outermost if there is none.
//
// The interpreter's own native frames (call machinery, the eval loop) say nothing about
// the user's code once its Python frames are there: in a stack with Python frames they
// are hidden unless `python_internals` asks for them. Stacks without Python frames are
// left exactly as they were.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "analyze/symbols/symbol_table.h"

namespace gpuperf {

// One Python frame, resolved (function = qualified name, file, line; kind kPython).
struct PythonStackFrame {
  Frame frame;
  bool entry = false;  // the outermost frame of one native eval-loop call
};

// The native eval loop: one native frame per evaluation call. Only
// _PyEval_EvalFrameDefault counts: _PyEval_Vector, PyEval_EvalCode and 3.10's
// _PyEval_EvalFrame wrapper call it rather than run frames themselves.
bool IsEvalLoopFunction(std::string_view function);

// A module of the interpreter itself: libpython*, or a python executable (python3.11).
bool IsInterpreterModule(std::string_view module);

// `native[i]` holds the frames of the i-th native PC, innermost PC first; each PC's frames
// are outermost first (its function, then what was inlined into it), as
// SymbolTable::Resolve gives them. `python` is innermost first. Appends the merged stack to
// `out`, outermost first.
void MergePythonFrames(std::span<const std::span<const Frame>> native,
                       std::span<const PythonStackFrame> python, bool python_internals,
                       std::vector<Frame>& out);

// The root frame given to stacks of PyTorch's autograd engine threads, which run backward
// and carry no Python frames.
inline constexpr std::string_view kAutogradBackwardLabel = "[autograd backward]";
bool IsAutogradThreadName(std::string_view thread_name);

}  // namespace gpuperf
