// The CPU call stack at a launch: unwound on the app thread inside the CUPTI callback,
// trimmed of gpuperf/CUPTI/driver frames, interned to a StackId.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf::inject {

// Loads the unwinder and learns which address ranges to trim. Call once, at init. With
// `frame_pointers`, stacks are walked by frame pointers where that was checked to be exact
// (stack_capture.cc).
void InitStackCapture(uint32_t max_depth, bool frame_pointers);

// Unwinds the calling thread and returns its interned stack, or 0 (counted) on failure.
StackId CaptureLaunchStack();

// Stacks interned since the last call (writer thread).
void DrainNewStacks(std::vector<StackRecord>& out, uint32_t pid);

const char* StackUnwinderName();

}  // namespace gpuperf::inject
