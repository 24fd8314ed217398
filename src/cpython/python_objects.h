// Reading CPython str and bytes objects in place, by the layout's offsets, without the
// Python API: what the interner copies out of a code object (names, file, line table).
//
// Strings: only "compact" str objects are read (their characters follow the header);
// every str the compiler and marshal create is compact, legacy ones are refused. The
// characters are 1, 2 or 4 bytes wide (PEP 393); they are written out as UTF-8, lone
// surrogates as U+FFFD. Lengths are trusted up to a sanity bound: a length beyond it
// means the memory is not what we think, and nothing is read.
#pragma once

#include <cstdint>

#include "cpython/python_runtime.h"

namespace gpuperf::inject {

inline constexpr uint64_t kMaxSanePyStringLength = 1u << 20;  // code points
inline constexpr uint64_t kMaxSanePyBytesLength = 1u << 28;

// Longest copies the code tables keep (python_code_table.h, and the CPU profiler's,
// src/ebpf/python_target.h): longer names are cut at a character boundary, longer line
// tables at their end (lines past the cut resolve to 0, "unknown").
inline constexpr int kMaxPyNameBytes = 512;
inline constexpr int kMaxPyFilenameBytes = 4096;
inline constexpr uint32_t kMaxPyLineTableBytes = 1u << 20;

// Writes the UTF-8 text of `object` into out[0..capacity), cut at a character boundary
// when longer. Returns the bytes written, or -1 when `object` is not a readable str.
int CopyPyString(const PyRuntimeView& rt, uint64_t object, char* out, int capacity);

// The contents of a bytes object, in place; false when `object` is not a bytes object or
// its length is not sane.
bool PyBytesContents(const PyRuntimeView& rt, uint64_t object, const uint8_t** data,
                     uint64_t* size);

}  // namespace gpuperf::inject
