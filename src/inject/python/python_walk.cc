#include "inject/python/python_walk.h"

#include "cpython/python_layout_tables.h"

namespace gpuperf::inject {
namespace {

bool Aligned(uint64_t pointer) {
  return (pointer & 7) == 0;
}

// One loop per flavor, so the per-frame branches on the flavor fold away, and one per
// built-in layout (kStatic), whose offsets become constants in the loads. At 50 frames a
// launch the loop is the budget (100 ns), so a recorded frame costs only what it must:
// its previous frame (loaded first: the chain is the critical path), its owner or entry
// flag, its code object and that object's type, its instruction pointer, three stores;
// the checks that bound the walk cost a compare each. Whether a frame is incomplete (its
// instruction before its code's _co_firsttraceable) would take a load from another cache
// line of the code object and a branch; the reader decides it instead
// (cpython/python_lines.h PythonFrameIsIncomplete) from the raw offset and owner recorded
// here and the value the code table copies once per code object.
template <PyFrameFlavor kFlavor, const PyLayout* kStatic>
PyWalkResult Walk(const PyRuntimeView& rt, uint64_t frame, PyFrameSample* out, int max) {
  // A copy: the stores to `out` could otherwise alias its offsets, which would be loaded
  // again after each one (with kStatic it folds away).
  const PyLayout l = kStatic != nullptr ? *kStatic : rt.layout;
  const uint64_t code_type = rt.code_type;
  PyWalkResult result;
  PyFrameSample* cursor = out;
  PyFrameSample* const end = out + max;
  // Links that recorded no frame (shims, frames without code): recorded frames are bounded
  // by `end`, so together they bound a cycle.
  int idle_budget = kMaxPyWalkSteps;
  // 3.12+: a shim marks the frame recorded just before it, so each frame's flags are kept
  // in a register and stored when the next frame is recorded (or the walk ends), not
  // stored and then read back (`scratch` takes those of "the frame before the first").
  uint32_t scratch = 0;
  uint32_t* last_flags_at = &scratch;
  uint32_t last_flags = 0;
  for (uint64_t next; frame != 0; frame = next) {
    if (cursor == end) {
      result.truncated = true;
      break;
    }
    if (!Aligned(frame)) {
      result.broken = true;
      break;
    }
    next = PyLoad<uint64_t>(frame, l.frame_previous);
    uint32_t flags = kFlavor == PyFrameFlavor::kFrameObjects ? kPyFrameEntry : 0;
    if constexpr (kFlavor != PyFrameFlavor::kFrameObjects) {
      const int8_t owner = PyLoad<int8_t>(frame, l.frame_owner);
      if constexpr (kFlavor == PyFrameFlavor::kShimFrames) {
        // An entry shim: the frame recorded just before it began a native eval call.
        if (owner >= l.shim_owner) [[unlikely]] {
          last_flags |= kPyFrameEntry;
          if (--idle_budget == 0) {
            result.truncated = true;
            break;
          }
          continue;
        }
        flags = uint8_t(owner);
      } else if (l.frame_owner == l.frame_is_entry + 1) {
        // 3.11's `bool is_entry; char owner;`: one load and a rotate give both flags.
        static_assert(kPyFrameEntry == 1u << 8 && kPyFrameOwnerMask == 0xff);
        const uint16_t both = PyLoad<uint16_t>(frame, l.frame_is_entry);
        flags = uint16_t(both << 8 | both >> 8);
      } else {
        flags =
            uint8_t(owner) | (PyLoad<uint8_t>(frame, l.frame_is_entry) != 0 ? kPyFrameEntry : 0);
      }
    }
    // The type check also guards against a misaligned pointer: loads need no alignment
    // here, and no code object lives at one.
    const uint64_t code = PyLoad<uint64_t>(frame, l.frame_code) & l.code_pointer_mask;
    if (code == 0 || PyLoad<uint64_t>(code, l.ob_type) != code_type) [[unlikely]] {
      ++result.skipped;
      if (--idle_budget == 0) {
        result.truncated = true;
        break;
      }
      continue;
    }
    uint32_t offset;
    if constexpr (kFlavor == PyFrameFlavor::kFrameObjects) {
      const int32_t lasti = PyLoad<int32_t>(frame, l.frame_instr);  // an index, -1 if not started
      offset = lasti < 0 ? kPyNoInstruction : uint32_t(lasti);
    } else {
      // Before the bytecode (a frame that has not started: its instruction pointer is one
      // unit before it) gives -1, kPyNoInstruction.
      const int64_t bytes =
          int64_t(PyLoad<uint64_t>(frame, l.frame_instr) - code) - l.code_bytecode;
      offset = uint32_t(bytes >> 1);
    }
    if constexpr (kFlavor == PyFrameFlavor::kShimFrames) {
      *last_flags_at = last_flags;
      last_flags_at = &cursor->flags;
      last_flags = flags;
      cursor->code = code;
      cursor->instr_offset = offset;
      ++cursor;
    } else {
      *cursor++ = PyFrameSample{.code = code, .instr_offset = offset, .flags = flags};
    }
  }
  if constexpr (kFlavor == PyFrameFlavor::kShimFrames) *last_flags_at = last_flags;
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
    case 14:
      return Walk<kShimFrames, &kPyLayout314>(rt, frame, out, max);
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
