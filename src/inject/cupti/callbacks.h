// CUPTI API callbacks: the CPU stack at every launch, copy, set and allocation,
// linked to the call's correlation id; the API records themselves; plus flushes before state that
// CUPTI loses (cudaDeviceReset, context destruction).
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct Recorder;

// Subscribes and enables the callbacks. Returns false (after logging once and counting
// cupti_subscribe_failed) when another tool holds CUPTI's single subscriber slot.
// With config.api_from_callbacks, the same callbacks also write the API records (the
// thread's outermost call, start to end); once `recorder.subscribed` holds this function's
// result, Recorder::ApiFromCallbacks keeps CUPTI's RUNTIME/DRIVER activity kinds, which
// cost more per call, off.
bool EnableCallbacks(Recorder& recorder);
// After EnableCallbacks failed because another client holds CUPTI's subscriber slot: that
// client's name as CUPTI gives it ("CUPTI for Kineto"; "another profiler" when unnamed).
// Empty when the slot was free or CUPTI failed otherwise.
const char* OtherSubscriberName();

// Switches the API callbacks on and off (capture range; the benchmark toggle).
void SetApiCallbacks(bool enable);
// The API callbacks do nothing from now on, but stay switched on in CUPTI until the next
// SetApiCallbacks(true) or the finalize. Measured on the H200 (CUDA 13.0, driver 580;
// tests/gpu/cupti_cycle.c, without gpuperf): a PyTorch process whose runtime or driver
// callbacks were switched off by id (cuptiEnableCallback(0, ...)) dies of a segfault or heap
// corruption within a few finalize cycles, even through a fresh subscriber in between; left on,
// or switched by whole domains, 15 cycles of 15 ran clean. So every path that may finalize
// later (a capture range's end, an attach window's end, the detach) quiets them instead.
void QuietApiCallbacks();
// The benchmark toggle's switch: launches are linked without a stack while paused.
void PauseStacksForBench(bool paused);
// The callbacks that keep the recording right whatever else is on: a context's creation and
// destruction, cuInit's end (EnableCallbacks turns them on).
void EnableResourceCallbacks();

// Gives up the subscriber (EnableCallbacks takes it again): detach.h, before cuptiFinalize.
void UnsubscribeCallbacks();
bool CallbacksSubscribed();
// After cuptiFinalize, which takes the subscriber with it.
void ForgetSubscriber();
// Every runtime and driver API callback on: the first API exit finalizes CUPTI (detach.h).
void SetApiDomainsForFinalize();
// Takes the subscriber with no callback enabled: the benchmark hook's idle level, and a
// detach that had no subscriber of its own. DisableAllCallbacksForBench switches every
// callback of it off, the resource ones too.
bool SubscribeIdle(Recorder& recorder);
void DisableAllCallbacksForBench();
// IdleCallbacksForBench(true): every callback returns at once (CUPTI's own cost of calling
// them, nothing recorded). DisableDriverCallbacksForBench: the planned driver-API callbacks
// off until SetApiCallbacks (the cost of the driver calls nested in runtime calls).
void IdleCallbacksForBench(bool idle);
void DisableDriverCallbacksForBench();

// The hardware profilers (hardware.h) see every callback of gpuperf's subscriber before the
// tracer does: `domain` and `cbid` are CUPTI's, `data` its callback data.
using CallbackObserver = void (*)(int domain, uint32_t cbid, const void* data);
void SetCallbackObserver(CallbackObserver observer);
// Enables one more callback on gpuperf's subscriber; false when there is no subscriber.
bool EnableExtraCallback(int domain, uint32_t cbid);

// The marker function the eBPF collector's uprobe reads correlation ids from.
extern "C" void gpuperf_launch_marker(unsigned correlation_id);

}  // namespace gpuperf::inject
