// Line numbers of Python frames, resolved offline from what the injection library copied
// of each code object (src/inject/python/): its first line and its raw line table.
//
// A frame is recorded as (code object, instruction offset in 16-bit code units). CPython
// maps a bytecode offset to a line with the code object's co_linetable, whose format
// changed in 3.11:
//   3.10  pairs of bytes (bytecode bytes covered, signed line delta); a delta of -128
//         means "no line" for that range.
//   3.11+ the location table (Objects/locations.md): one entry per run of code units, a
//         header byte (bit 7 set, a 4-bit kind, 3 bits of length - 1) and, depending on
//         the kind, a line delta and columns as 6-bit varints.
// Both decoders below stop at the end of the table and never read past it: the bytes
// come from another process's memory and may be cut short.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpuperf {

enum class PyLineTableFormat : uint8_t {
  kNone = 0,          // no table copied: lines are unknown
  kLineTable310 = 1,  // CPython 3.10 co_linetable
  kLocations311 = 2,  // CPython 3.11 and later co_linetable (location table)
};

// The instruction offset of a frame that had not started running: CPython reports its
// first line.
inline constexpr uint32_t kPyNoInstruction = 0xffffffffu;

// What the recording kept of one code object.
struct PyCodeInfo {
  uint32_t id = 0;               // interned id (1-based) that frames refer to
  std::string name;              // co_qualname (3.11+) or co_name (3.10); empty if unreadable
  std::string filename;          // co_filename; empty if unreadable
  int32_t first_line = 0;        // co_firstlineno
  uint32_t python_version = 0;   // (major << 24) | (minor << 16), e.g. 0x030b0000
  uint32_t code_units = 0;       // bytecode length in 16-bit code units
  uint32_t first_traceable = 0;  // 3.11+ _co_firsttraceable (code units); 0 if unknown
  PyLineTableFormat line_format = PyLineTableFormat::kNone;
  std::string line_table;  // raw co_linetable bytes
};

// The source line of the instruction at `instr_offset` (code units), or 0 when the table
// has no line for it (an artificial instruction, an offset past the table, no table).
// kPyNoInstruction gives `first_line`, as CPython does for a frame that had not started.
int ResolvePythonLine(PyLineTableFormat format, int32_t first_line, std::span<const uint8_t> table,
                      uint32_t instr_offset);
int ResolvePythonLine(const PyCodeInfo& code, uint32_t instr_offset);

// Whether CPython leaves the frame out of tracebacks and sys._getframe() (3.11+
// _PyFrame_IsIncomplete): its instruction is before the bytecode (an offset that is
// negative as an int32, kPyNoInstruction among them) or, unless it is a generator's or
// coroutine's frame, before the code's first traceable instruction. Such frames have not
// started, or are interpreter-internal trampolines (3.13's _Py_InitCleanup). The in-process
// walker records them as any other, and the reader drops them with this test (traces from
// before it did drop them in-process; their records keep first_traceable 0 and no frame
// offsets below 0, so nothing more is dropped). 3.10 shows every frame.
bool PythonFrameIsIncomplete(uint32_t python_version, uint32_t first_traceable,
                             uint32_t instr_offset, bool generator);

}  // namespace gpuperf
