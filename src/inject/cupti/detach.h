// Detaching gpuperf from CUPTI altogether (cuptiFinalize), for good or until attached again.
//
// CUPTI attached with every activity kind and callback switched off still costs a launch-bound
// program 3-6% (docs/performance.md, "Where the rest goes"): the subscriber and the activity
// API stay in the driver's path. Finalizing takes them out. Used at the end of an attach
// window, at the end of a capture range (record --duration: nothing will be recorded again)
// and by the benchmark hook's detached levels (bench_toggle.cc), which attach again afterwards.
//
// Where cuptiFinalize may run: CUPTI's header allows it at the exit of a CUDA runtime or
// driver API call, or anywhere once the client has synchronized every thread's CUDA work
// itself. A profiler that came in from outside cannot do the latter: called from the attach
// window's own thread while the program's threads were inside CUDA, it corrupted a PyTorch
// program's heap on the H200 (docs/attach.md, "Detaching"). So DetachCupti only asks for
// it: the first callback at the exit of any runtime or driver call claims the request and
// finalizes there, as CUPTI's own sample and Kineto do.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct Recorder;

enum class FinalizeOutcome {
  kFinalized,  // by a callback at the exit of one of the program's CUDA calls
  kPending,    // no CUDA call came in the wait: the next one finalizes
  kLeft,       // a callback of ours did not end in time: unsubscribed, not finalized
  kNotOurs,    // never subscribed (another client holds CUPTI): nothing of it is touched
};

// Every kind and callback off, what CUPTI holds delivered (forced: records of work still
// running come as they are), the writer's CUPTI flushes stopped; then cuptiFinalize asked of
// the next API exit, waiting up to `wait_ms` for it. From then on no gpuperf code calls CUPTI
// (any call would attach it again) until MarkCuptiAttached. Not from a CUPTI callback.
FinalizeOutcome DetachCupti(Recorder& recorder, uint64_t wait_ms);
// The same, finalized on the calling thread at once: only for a caller that knows no CUDA
// call is in flight in the process (the benchmark hook, called between batches).
void DetachCuptiNow(Recorder& recorder);
// Called first thing by every callback of ours while a finalize is asked for: true when the
// callback must return at once (it may have finalized CUPTI itself).
bool FinalizeRequested();
// `flush_running`: the writer's periodic flush is still inside CUPTI; a later exit finalizes.
void FinalizeAtApiExit(int domain, const void* callback_data, bool flush_running);
// Before subscribing again (the next attach window): a finalize still asked for is withdrawn
// and our subscriber given up, or one being done is waited for. False when it could not be
// settled in `wait_ms` (a callback finalizing now has not returned).
bool SettlePendingFinalize(uint64_t wait_ms);
// The process is exiting: a DetachCupti waiting for an API exit returns now (the exit hook
// must not wait for a window's end through it).
void StopWaitingForFinalize();
// After attaching again (the benchmark hook): CUPTI calls are allowed again.
void MarkCuptiAttached();
bool CuptiDetached();
const char* FinalizeOutcomeName(FinalizeOutcome outcome);

}  // namespace gpuperf::inject
