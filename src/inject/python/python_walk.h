// The walk of one thread's CPython frame chain, from its PyThreadState, by the layout's
// offsets: plain loads, no GIL, no Python API, no allocation, no locks.
//
// Why this is safe without the GIL: a thread's frame chain is written only by that
// thread, and the walk runs on that thread (inside its CUDA call), so the chain cannot
// change under it; every frame on the chain holds a reference to its code object, so the
// code objects stay alive for the whole callback. What is not trusted: the layout could
// still be wrong for an unusual build, so frame pointers are checked for alignment, every
// code object for its type (ob_type == &PyCode_Type) before it is used, and the walk is
// bounded (kMaxPythonFrames recorded, and at most kMaxPyWalkSteps links that recorded
// nothing: a cycle ends there).
//
// Incomplete frames (3.11+: CPython's _PyFrame_IsIncomplete, a frame whose instruction is
// before its code's _co_firsttraceable and that is not a generator's) are recorded as any
// other, with their raw offset and owner; the reader leaves them out
// (cpython/python_lines.h PythonFrameIsIncomplete), as CPython's own tracebacks do.
#pragma once

#include <cstdint>

#include "cpython/python_runtime.h"

namespace gpuperf::inject {

inline constexpr int kMaxPythonFrames = 128;
inline constexpr int kMaxPyWalkSteps = 2 * kMaxPythonFrames;  // links that recorded nothing

// 3.11+: the low 8 bits of PyFrameSample::flags are the frame's owner byte, kept for the
// reader: a generator's or coroutine's frame (FRAME_OWNED_BY_GENERATOR, 1 in 3.11 to 3.14)
// is never incomplete. 3.10 frames have 0 there.
inline constexpr uint32_t kPyFrameOwnerMask = 0xff;
inline constexpr uint8_t kPyGeneratorOwner = 1;
// Set on the outermost Python frame of each native _PyEval_EvalFrameDefault call: the
// frames from the previous entry (or the innermost frame) down to and including this
// one ran inside one native evaluation-loop frame. On 3.10 every frame is an entry.
inline constexpr uint32_t kPyFrameEntry = 1u << 8;

constexpr bool PyFrameIsGenerator(uint32_t flags) {
  return (flags & kPyFrameOwnerMask) == kPyGeneratorOwner;
}

struct PyFrameSample {
  uint64_t code = 0;  // the code object's address: an identity during the callback only
  // Code units into the bytecode. kPyNoInstruction for a frame that has not started (3.11+:
  // an instruction pointer before the bytecode, read as a negative int32).
  uint32_t instr_offset = 0;
  uint32_t flags = 0;  // the owner (kPyFrameOwnerMask), kPyFrameEntry
};

struct PyWalkResult {
  int frames = 0;          // samples written, innermost first
  bool truncated = false;  // the chain went on past `max` frames or kMaxPyWalkSteps idle links
  bool broken = false;     // a misaligned frame pointer ended the walk early
  uint32_t skipped = 0;    // frames whose code was not a code object (not recorded)
};

// Walks the frames of `tstate` (a PyThreadState*, 0 for none) into out[0..max).
PyWalkResult WalkPyFramesOf(const PyRuntimeView& rt, uint64_t tstate, PyFrameSample* out, int max);

}  // namespace gpuperf::inject
