#include "inject/python/python_walk.h"

namespace gpuperf::inject {
namespace {

bool Aligned(uint64_t pointer) { return (pointer & 7) == 0; }

// 3.10: f_lasti is an instruction index, -1 before the first instruction.
uint32_t LastInstruction310(const PyLayout& l, uint64_t frame) {
  int32_t lasti = PyLoad<int32_t>(frame, l.frame_instr);
  return lasti < 0 ? kPyNoInstruction : uint32_t(lasti);
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
    int8_t owner = 0;
    if constexpr (kFlavor != PyFrameFlavor::kFrameObjects) owner = PyLoad<int8_t>(frame, l.frame_owner);
    if constexpr (kFlavor == PyFrameFlavor::kShimFrames) {
      // An entry shim: the frame recorded just before it began a native eval call.
      if (owner >= l.shim_owner) {
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
    uint32_t flags = kFlavor == PyFrameFlavor::kFrameObjects ? kPyFrameEntry : 0;
    if constexpr (kFlavor == PyFrameFlavor::kEntryFlag) {
      if (PyLoad<uint8_t>(frame, l.frame_is_entry) != 0) flags = kPyFrameEntry;
    }
    uint32_t offset;
    if constexpr (kFlavor == PyFrameFlavor::kFrameObjects) {
      offset = LastInstruction310(l, frame);
    } else {
      uint64_t instr = PyLoad<uint64_t>(frame, l.frame_instr);
      uint64_t start = code + l.code_bytecode;
      int64_t first = owner == l.generator_owner ? 0 : PyLoad<int32_t>(code, l.code_first_traceable);
      if (int64_t(instr - start) < 2 * first || instr < start) {
        // Incomplete: not a frame CPython shows. Its entry mark, if any, moves down.
        if (flags != 0 && n > 0) out[n - 1].flags |= kPyFrameEntry;
        frame = previous;
        continue;
      }
      uint64_t units = (instr - start) >> 1;
      offset = units < kPyNoInstruction ? uint32_t(units) : kPyNoInstruction;
    }
    PyFrameSample& sample = out[n++];
    sample.code = code;
    sample.code_id = 0;
    sample.instr_offset = offset;
    sample.flags = flags;
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
