#include "analyze/symbols/pytorch_view.h"

#include <span>
#include <utility>

#include "analyze/symbols/python_stacks.h"

namespace gpuperf {
namespace {

// A frame with a symbol: not "libfoo.so+0x1234" nor "0x7f...".
bool HasSymbol(const Frame& frame) {
  return !frame.function.empty() && !frame.function.starts_with("0x") &&
         frame.function.find("+0x") == std::string_view::npos;
}

// Whether an op's entry comes at or after `i` before anything that is neither plumbing nor an
// op: plumbing that leads into an op (the Python binding) folds into it; plumbing that leads
// nowhere is kept, so no frame vanishes without a name taking its place.
bool LeadsIntoOp(std::span<const TorchFrameClass> classes, size_t i) {
  for (; i < classes.size(); ++i) {
    const TorchFrameRole role = classes[i].role;
    if (role == TorchFrameRole::kOpEntry || role == TorchFrameRole::kBackwardNode) return true;
    if (role != TorchFrameRole::kOpPlumbing) return false;
  }
  return false;
}

Frame NamedFrame(const Frame& like, std::string_view name) {
  Frame frame;
  frame.function = name;
  frame.module = like.module;
  frame.kind = FrameKind::kNative;
  frame.pc = like.pc;
  return frame;
}

}  // namespace

void FoldPyTorchFrames(std::vector<Frame>& frames, size_t from,
                       const std::function<std::string_view(std::string)>& intern) {
  if (from >= frames.size() || !IsTorchStack(frames, from)) return;
  // Each frame looked up once: the plumbing's look-ahead and the library runs read these.
  std::vector<TorchFrameClass> classes;
  classes.reserve(frames.size() - from);
  for (size_t i = from; i < frames.size(); ++i) classes.push_back(ClassifyTorchFrame(frames[i]));
  std::vector<Frame> folded;
  folded.reserve(frames.size() - from);
  std::string_view op_shown;  // the op whose frame was emitted last, while inside it
  // Under `[autograd backward]`: the engine thread's start (libc, libstdc++) and the engine's
  // calls, up to the first autograd node or op.
  bool engine_frames = false;
  for (size_t i = from; i < frames.size(); ++i) {
    const Frame& frame = frames[i];
    const TorchFrameClass& what = classes[i - from];
    if (frame.kind == FrameKind::kLabel && frame.function == kAutogradBackwardLabel) {
      folded.push_back(frame);
      engine_frames = true;
      continue;
    }
    if (engine_frames) {
      if (what.role != TorchFrameRole::kBackwardNode && what.role != TorchFrameRole::kOpEntry &&
          frame.kind == FrameKind::kNative) {
        continue;
      }
      engine_frames = false;
    }
    switch (what.role) {
      case TorchFrameRole::kBackwardNode:
        folded.push_back(NamedFrame(frame, what.op));
        op_shown = {};
        break;
      case TorchFrameRole::kModuleWrapper:
        break;
      case TorchFrameRole::kOpEntry:
        // An op's call and its redispatch (autograd, then the backend) are one op.
        if (what.op != op_shown) {
          folded.push_back(NamedFrame(frame, intern("aten::" + std::string(what.op))));
          op_shown = what.op;
        }
        break;
      case TorchFrameRole::kOpPlumbing:
        if (op_shown.empty() && !LeadsIntoOp(classes, i - from)) folded.push_back(frame);
        break;
      case TorchFrameRole::kLibrary:
      case TorchFrameRole::kCudaRuntime: {
        // The run of this library's frames becomes its entry point: the outermost frame of
        // the run that has a symbol.
        size_t end = i;
        const Frame* entry = nullptr;
        while (end < frames.size()) {
          const TorchFrameClass& next = classes[end - from];
          if (next.role != what.role || next.library != what.library) break;
          if (entry == nullptr && HasSymbol(frames[end])) entry = &frames[end];
          ++end;
        }
        folded.push_back(entry != nullptr
                             ? NamedFrame(*entry, entry->function)
                             : NamedFrame(frame, intern("[" + std::string(what.library) + "]")));
        i = end - 1;
        op_shown = {};
        break;
      }
      case TorchFrameRole::kUser:
        folded.push_back(frame);
        op_shown = {};
        break;
    }
  }
  frames.resize(from);
  frames.insert(frames.end(), folded.begin(), folded.end());
}

}  // namespace gpuperf
