// The process's one memory budget (memory_budget.h) with the library's bookkeeping: the
// peak and the growth events go into the trace's counters, the first growth past the soft
// budget and the first refusal at the hard cap each print one line.
#pragma once

#include <cstdint>

#include "inject/config.h"

namespace gpuperf::inject {

// Once, from InitializeInjection, before any buffer is handed out.
void ConfigureRecorderMemory(const Config& config);

// Reserves `bytes` of CUPTI buffer or writer batch; false past the hard cap (the caller
// drops what it would have held, and counts it).
bool ReserveRecorderMemory(uint64_t bytes);
void ReleaseRecorderMemory(uint64_t bytes);

// More than half the soft budget is held: CUPTI's buffers should be collected early.
bool RecorderMemoryUnderPressure();
uint64_t RecorderMemoryHeld();

}  // namespace gpuperf::inject
