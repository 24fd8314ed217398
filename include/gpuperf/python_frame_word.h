// Python frames inside a recorded stack (StackRecord::pcs).
//
// A launch stack holds the native return addresses first (innermost first), then the
// Python frames of the launching thread (innermost first), each as one tagged 64-bit word:
//
//   bit 63       1: a Python frame, not a native PC
//   bit 62       the frame began a native evaluation-loop call (kPyFrameEntry of the walker)
//   bit 61       a generator's or coroutine's frame (3.11+), which is never incomplete
//   bits 32..60  the code id, a PythonCodeRecord of the same process (0: not interned)
//   bits 0..31   the instruction offset in 16-bit code units, as the walker read it: a
//                negative int32 (0xffffffff) for a frame that had not started
//
// Since bit 61 exists, 3.11+ incomplete frames (cpython/python_lines.h
// PythonFrameIsIncomplete) are in the stack and the reader drops them; before, the walker
// left them out and bit 61 was the code id's top bit, never set (ids stay far below 2^29).
//
// User-space PCs on x86-64 and aarch64 are below 2^47, so a native PC never has bit 63 set.
// The symbolizer leaves tagged words alone; the analysis merges them with the native frames
// (analyze/symbols/python_stacks.h).
#pragma once

#include <cstdint>

namespace gpuperf {

inline constexpr uint64_t kPythonFrameTag = 1ull << 63;
inline constexpr uint64_t kPythonFrameEntry = 1ull << 62;
inline constexpr uint64_t kPythonFrameGenerator = 1ull << 61;
inline constexpr uint32_t kMaxPythonCodeId = (1u << 29) - 1;
// Code ids of one process are numbered by two recorders: the injection library inside it
// (launch stacks; from 1, at most a few 10^5) and the CPU profiler outside it (CPU samples,
// src/ebpf/python_target.h; from here), so the two sets of PythonCodeRecords of one pid
// never name different code objects by the same id.
inline constexpr uint32_t kCpuPythonCodeIdBase = 1u << 28;

constexpr bool IsPythonFrameWord(uint64_t word) {
  return (word & kPythonFrameTag) != 0;
}

// A code id above kMaxPythonCodeId cannot be stored and becomes 0 ("not interned").
constexpr uint64_t MakePythonFrameWord(uint32_t code_id, uint32_t instr_offset, bool entry,
                                       bool generator = false) {
  const uint64_t code = code_id <= kMaxPythonCodeId ? code_id : 0;
  return kPythonFrameTag | (entry ? kPythonFrameEntry : 0) |
         (generator ? kPythonFrameGenerator : 0) | code << 32 | instr_offset;
}

constexpr uint32_t PythonFrameCodeId(uint64_t word) {
  return static_cast<uint32_t>(word >> 32) & kMaxPythonCodeId;
}

constexpr uint32_t PythonFrameInstruction(uint64_t word) {
  return static_cast<uint32_t>(word);
}

constexpr bool PythonFrameIsEntry(uint64_t word) {
  return (word & kPythonFrameEntry) != 0;
}

constexpr bool PythonFrameIsGenerator(uint64_t word) {
  return (word & kPythonFrameGenerator) != 0;
}

}  // namespace gpuperf
