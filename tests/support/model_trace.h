// A small, realistic trace for flame graph tests and goldens: a training process with a
// main thread and a data-loader thread on two GPUs, launching through the runtime, the
// driver (nested ids), a CUDA graph, copies and sets; plus the cases that must stay
// visible: a kernel whose launch link was dropped, a launch whose stack could not be
// unwound, an unsymbolized frame, and a kernel far too short to be drawn.
#pragma once

#include "gpuperf/trace.h"

namespace gpuperf::testing {

Trace ModelTrace();

// Writes an in-memory trace to a .gpt file (string ids are kept: they are interned in
// order).
void WriteTraceFile(const Trace& trace, const std::string& path);

}  // namespace gpuperf::testing
