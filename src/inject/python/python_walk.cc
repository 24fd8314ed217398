#include "inject/python/python_walk.h"

#include "inject/python/python_layout_tables.h"

namespace gpuperf::inject {
namespace {

bool Aligned(uint64_t pointer) {
  return (pointer & 7) == 0;
}

// One loop per flavor, so the per-frame branches on the flavor fold away, and one per
// built-in layout (kStatic), whose offsets become constants in the loads. The loop is
// kept short (about 30 instructions a frame): at 50 frames a launch it is the budget.
template <PyFrameFlavor kFlavor, const PyLayout* kStatic>
PyWalkResult Walk(const PyRuntimeView& rt, uint64_t frame, PyFrameSample* out, int max) {
  const PyLayout& l = kStatic != nullptr ? *kStatic : rt.layout;
  const uint64_t code_type = rt.code_type;  // a local: the stores to `out` cannot change it
  PyWalkResult result;
  PyFrameSample* cursor = out;
  PyFrameSample* const end = out + max;
  for (int budget = kMaxPyWalkSteps; frame != 0; --budget) {
    if (cursor == end || budget == 0) {
      result.truncated = true;
      break;
    }
    if (!Aligned(frame)) {
      result.broken = true;
      break;
    }
    uint64_t current = frame;
    frame = PyLoad<uint64_t>(current, l.frame_previous);
    if constexpr (kFlavor == PyFrameFlavor::kShimFrames) {
      // An entry shim: the frame recorded just before it began a native eval call.
      if (PyLoad<int8_t>(current, l.frame_owner) >= l.shim_owner) {
        if (cursor != out) cursor[-1].flags = kPyFrameEntry;
        continue;
      }
    }
    // The type check also guards against a misaligned pointer: loads need no alignment
    // here, and no code object lives at one.
    uint64_t code = PyLoad<uint64_t>(current, l.frame_code) & l.code_pointer_mask;
    if (code == 0 || PyLoad<uint64_t>(code, l.ob_type) != code_type) {
      ++result.skipped;
      continue;
    }
    uint32_t flags = kFlavor == PyFrameFlavor::kFrameObjects ? kPyFrameEntry : 0;
    if constexpr (kFlavor == PyFrameFlavor::kEntryFlag) {
      flags = PyLoad<uint8_t>(current, l.frame_is_entry) != 0 ? kPyFrameEntry : 0;
    }
    uint32_t offset;
    if constexpr (kFlavor == PyFrameFlavor::kFrameObjects) {
      int32_t lasti = PyLoad<int32_t>(current, l.frame_instr);  // an index, -1 if not started
      offset = lasti < 0 ? kPyNoInstruction : uint32_t(lasti);
    } else {
      int64_t bytes = int64_t(PyLoad<uint64_t>(current, l.frame_instr) - code - l.code_bytecode);
      if (bytes < 2 * int64_t(PyLoad<int32_t>(code, l.code_first_traceable)) &&
          (bytes < 0 || PyLoad<int8_t>(current, l.frame_owner) != l.generator_owner)) {
        // Incomplete (a generator's frame never is): not a frame CPython shows. Its
        // entry mark, if any, moves down.
        if (flags != 0 && cursor != out) cursor[-1].flags = kPyFrameEntry;
        continue;
      }
      offset = uint32_t(uint64_t(bytes) >> 1);
    }
    cursor->code = code;
    cursor->instr_offset = offset;
    cursor->flags = flags;
    ++cursor;
  }
  result.frames = int(cursor - out);
  return result;
}

}  // namespace

PyWalkResult WalkPyFramesOf(const PyRuntimeView& rt, uint64_t tstate, PyFrameSample* out, int max) {
  const PyLayout& l = rt.layout;
  if (tstate == 0 || !Aligned(tstate) || max <= 0) return {};
  uint64_t frame = PyLoad<uint64_t>(tstate, l.tstate_frame);
  if (l.cframe_current_frame >= 0 && frame != 0) {
    if (!Aligned(frame)) return PyWalkResult{.broken = true};
    frame = PyLoad<uint64_t>(frame, l.cframe_current_frame);
  }
  if (max > kMaxPythonFrames) max = kMaxPythonFrames;
  using enum PyFrameFlavor;
  switch (l.builtin_id) {
    case 10:
      return Walk<kFrameObjects, &kPyLayout310>(rt, frame, out, max);
    case 11:
      return Walk<kEntryFlag, &kPyLayout311>(rt, frame, out, max);
    case 12:
      return Walk<kShimFrames, &kPyLayout312>(rt, frame, out, max);
    case 13:
      return Walk<kShimFrames, &kPyLayout313>(rt, frame, out, max);
    default:
      break;
  }
  switch (l.flavor) {
    case kFrameObjects:
      return Walk<kFrameObjects, nullptr>(rt, frame, out, max);
    case kEntryFlag:
      return Walk<kEntryFlag, nullptr>(rt, frame, out, max);
    case kShimFrames:
      return Walk<kShimFrames, nullptr>(rt, frame, out, max);
  }
  return {};
}

}  // namespace gpuperf::inject
