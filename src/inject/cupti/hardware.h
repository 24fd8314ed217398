// The hardware profilers, as injection.cc sees them: `gpuperf metrics` (range_profiler.h) or
// `gpuperf record --pc-sampling` (pc_sampling.h), whichever the configuration asks for.
// CUPTI-free interface; both need gpuperf's CUPTI subscription (callbacks.h).
#pragma once

namespace gpuperf::inject {

struct Recorder;

// After EnableCallbacks. Says in one line when nothing can be measured; recording goes on.
void StartHardwareProfilers(Recorder& recorder);
// Writer thread, every period.
void CollectHardwareData();
// Process exit, before the writer's last cycle.
void FinishHardwareProfilers();

}  // namespace gpuperf::inject
