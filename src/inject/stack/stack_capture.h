// The CPU call stack at a launch: unwound on the app thread inside the CUPTI callback,
// trimmed of gpuperf/CUPTI/driver frames, interned to a StackId.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"

namespace gpuperf::inject {

// Loads the unwinder and learns which address ranges to trim. Call once, at init. With
// `frame_pointers`, stacks are walked by frame pointers where that was checked to be exact
// (stack_capture.cc). With `python`, looks for a CPython interpreter in the process; where
// one is found, stacks also carry the calling thread's Python frames.
void InitStackCapture(uint32_t max_depth, bool frame_pointers, bool python);

// Unwinds the calling thread and returns its interned stack (native PCs, then Python
// frames as tagged words), or 0 (counted) on failure.
StackId CaptureLaunchStack();

// Interns the one-word stack of a marker (gpuperf/stack_marker.h); 0 before InitStackCapture.
StackId InternMarkerStack(uint64_t word);

// Python code objects interned since the last call, as records of process `pid`, their
// names and file names interned in `names` (writer thread). Drain after the stacks: every
// code a drained stack names is then drained too.
void DrainNewPythonCodeRecords(std::vector<PythonCodeRecord>& out, uint32_t pid, NameTable& names);

// The Python walker's counters into the stats table (writer thread).
void UpdatePythonStats();

// Stacks interned since the last call (writer thread).
void DrainNewStacks(std::vector<StackRecord>& out, uint32_t pid);

const char* StackUnwinderName();

}  // namespace gpuperf::inject
