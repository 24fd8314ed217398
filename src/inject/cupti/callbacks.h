// CUPTI API callbacks: the CPU stack at every launch, copy, set and allocation,
// linked to the call's correlation id; plus flushes before state that CUPTI loses
// (cudaDeviceReset, context destruction).
#pragma once

namespace gpuperf::inject {

struct Recorder;

// Subscribes and enables the callbacks. Returns false (after logging once and counting
// cupti_subscribe_failed) when another tool holds CUPTI's single subscriber slot.
bool EnableCallbacks(Recorder& recorder);

// The marker function the eBPF collector's uprobe reads correlation ids from.
extern "C" void gpuperf_launch_marker(unsigned correlation_id);

}  // namespace gpuperf::inject
