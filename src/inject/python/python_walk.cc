#include "inject/python/python_walk.h"

namespace gpuperf::inject {
namespace {

bool Aligned(uint64_t pointer) { return (pointer & 7) == 0; }

// Code units from the start of the bytecode, or kPyNoInstruction for a frame that has not
// executed anything yet (3.10 f_lasti -1; 3.11/3.12 prev_instr one before the start).
uint32_t InstructionOffset(const PyLayout& l, uint64_t frame, uint64_t code) {
  if (!l.instr_is_pointer) {
    int32_t lasti = PyLoad<int32_t>(frame, l.frame_instr);
    return lasti < 0 ? kPyNoInstruction : uint32_t(lasti);
  }
  uint64_t instr = PyLoad<uint64_t>(frame, l.frame_instr);
  uint64_t start = code + l.code_bytecode;
  if (instr < start || ((instr - start) >> 1) >= kPyNoInstruction) return kPyNoInstruction;
  return uint32_t((instr - start) >> 1);
}

// One loop per flavor, so the per-frame branches on the flavor fold away.
template <PyFrameFlavor kFlavor>
PyWalkResult Walk(const PyRuntimeView& rt, uint64_t frame, PyFrameSample* out, int max) {
  const PyLayout& l = rt.layout;
  PyWalkResult result;
  int n = 0;
  for (int steps = 0; frame != 0; ++steps) {
    if (n >= max || steps >= kMaxPyWalkSteps) {
      result.truncated = true;
      break;
    }
    if (!Aligned(frame)) {
      result.broken = true;
      break;
    }
    uint64_t previous = PyLoad<uint64_t>(frame, l.frame_previous);
    if constexpr (kFlavor == PyFrameFlavor::kShimFrames) {
      // An entry shim: the frame recorded just before it began a native eval call.
      if (PyLoad<int8_t>(frame, l.frame_owner) >= l.shim_owner) {
        if (n > 0) out[n - 1].flags |= kPyFrameEntry;
        frame = previous;
        continue;
      }
    }
    uint64_t code = PyLoad<uint64_t>(frame, l.frame_code) & l.code_pointer_mask;
    if (code == 0 || !Aligned(code) || PyLoad<uint64_t>(code, l.ob_type) != rt.code_type) {
      ++result.skipped;
      frame = previous;
      continue;
    }
    PyFrameSample& sample = out[n++];
    sample.code = code;
    sample.code_id = 0;
    sample.instr_offset = InstructionOffset(l, frame, code);
    if constexpr (kFlavor == PyFrameFlavor::kFrameObjects) {
      sample.flags = kPyFrameEntry;
    } else if constexpr (kFlavor == PyFrameFlavor::kEntryFlag) {
      sample.flags = PyLoad<uint8_t>(frame, l.frame_is_entry) != 0 ? kPyFrameEntry : 0;
    } else {
      sample.flags = 0;
    }
    frame = previous;
  }
  result.frames = n;
  return result;
}

}  // namespace

PyWalkResult WalkPyFramesOf(const PyRuntimeView& rt, uint64_t tstate, PyFrameSample* out,
                            int max) {
  const PyLayout& l = rt.layout;
  if (tstate == 0 || !Aligned(tstate) || max <= 0) return {};
  uint64_t frame = PyLoad<uint64_t>(tstate, l.tstate_frame);
  if (l.cframe_current_frame >= 0 && frame != 0) {
    if (!Aligned(frame)) return PyWalkResult{.broken = true};
    frame = PyLoad<uint64_t>(frame, l.cframe_current_frame);
  }
  if (max > kMaxPythonFrames) max = kMaxPythonFrames;
  switch (l.flavor) {
    case PyFrameFlavor::kFrameObjects:
      return Walk<PyFrameFlavor::kFrameObjects>(rt, frame, out, max);
    case PyFrameFlavor::kEntryFlag:
      return Walk<PyFrameFlavor::kEntryFlag>(rt, frame, out, max);
    case PyFrameFlavor::kShimFrames:
      return Walk<PyFrameFlavor::kShimFrames>(rt, frame, out, max);
  }
  return {};
}

}  // namespace gpuperf::inject
