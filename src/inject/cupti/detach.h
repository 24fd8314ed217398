// Detaching gpuperf from CUPTI altogether (cuptiFinalize), for good or until attached again.
//
// CUPTI attached with every activity kind and callback switched off still costs a launch-bound
// program 3-6% (docs/performance.md, "Where the rest goes"): the subscriber and the activity
// API stay in the driver's path. Finalizing takes them out. Used at the end of a capture range
// (record --duration: nothing will be recorded again) and by the benchmark hook's detached
// levels (bench_toggle.cc), which attach again afterwards.
#pragma once

namespace gpuperf::inject {

struct Recorder;

// Every kind and callback off, what CUPTI holds delivered (forced: records of work still
// running come as they are), the writer's CUPTI flushes stopped, the subscriber given up and
// CUPTI finalized. Then no gpuperf code calls CUPTI (any call would attach it again) until
// MarkCuptiAttached. Not from a CUPTI callback.
void DetachCupti(Recorder& recorder);
// After attaching again (the benchmark hook): CUPTI calls are allowed again.
void MarkCuptiAttached();
bool CuptiDetached();

}  // namespace gpuperf::inject
