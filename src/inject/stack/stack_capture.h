// The CPU call stack at a launch: unwound on the app thread inside the CUPTI callback,
// trimmed of gpuperf/CUPTI/driver frames, interned to a StackId.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"
#include "inject/stack/unwind_mode.h"

namespace gpuperf::inject {

struct StackCaptureOptions {
  uint32_t max_depth = 64;
  UnwindMode unwind = UnwindMode::kAuto;
  // Unwind every stack that was not unwound by libunwind once more with libunwind, and
  // count the stacks that differ (GPUPERF_UNWIND_VERIFY=1).
  bool verify = false;
  // Look for a CPython interpreter in the process; where one is found, stacks also carry
  // the calling thread's Python frames.
  bool python = true;
  // Where a launch has Python frames, keep only the native frames up to the innermost
  // eval-loop frame (stack_capture.cc); false (GPUPERF_NATIVE_STACKS=full) keeps them all.
  bool cut_at_python = true;
  // Reuse the stack of an earlier launch from the same registers and stack words without
  // unwinding (stack_memo.h); only with the .eh_frame tables. GPUPERF_STACK_MEMO=off: never.
  bool memo = true;
};

// Loads the unwinder, starts the table builder (table_builder.h) when the mode walks tables,
// and learns which address ranges to trim. Call at init; a second call only changes the
// mode and the verify switch (benchmarks, tests).
void InitStackCapture(const StackCaptureOptions& options);
// The same with `frame_pointers` = UnwindMode::kFramePointers, else kLibunwind.
void InitStackCapture(uint32_t max_depth, bool frame_pointers, bool python);

// Which unwinder gave a launch's native frames.
enum class StackSource : uint8_t {
  kNone = 0,           // unwinding failed
  kFramePointers = 1,  // the frame-pointer walk (checked against libunwind once per stack)
  kTable = 2,          // the .eh_frame tables
  kLibunwind = 3,      // libunwind (or libgcc's unwinder where libunwind is missing)
};

// Unwinds the calling thread and returns its interned stack (native PCs, then Python
// frames as tagged words), or 0 (counted) on failure. `*source`, when given, says which
// unwinder it came from; `*memo_hit`, when given, is set when the thread's stack memo gave
// it (no unwinding; its source is the tables, which gave it first). With `inherit_from`
// (a PyTorch backward launch: its forward op's stack, torch/autograd_link.h), the stack
// ends with kAutogradForwardWord and that stack's Python frames.
StackId CaptureLaunchStack(StackSource* source = nullptr, bool* memo_hit = nullptr,
                           StackId inherit_from = 0);

// The benchmark hook's switch (gpuperf_bench_toggle): launches take native frames only while
// paused.
void PausePythonFramesForBench(bool paused);
// ... and whole native stacks while paused, as with GPUPERF_NATIVE_STACKS=full.
void PauseNativeCutForBench(bool paused);
// ... and every stack unwound (no memo) while paused, as with GPUPERF_STACK_MEMO=off.
void PauseStackMemoForBench(bool paused);

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

// A new trace begins (an attach window): the next drains hand over every stack and Python
// code object interned so far, since the new file needs their definitions too.
void RewindStackDrains();

const char* StackUnwinderName();

}  // namespace gpuperf::inject
