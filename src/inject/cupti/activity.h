// CUPTI activity tracing: buffers, the kinds we enable, and delivery to the writer.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct Recorder;

// Registers the timestamp and buffer callbacks. Must run before any enable.
bool RegisterActivityCallbacks(Recorder& recorder);
// Enables (or disables) the configured activity kinds; all but CONCURRENT_KERNEL when
// `kernels` is false.
void EnableActivities(Recorder& recorder, bool enable, bool kernels = true);
// Hands every buffer with records to the translator; `forced` also returns
// incomplete records (CUPTI's at-exit mode).
void FlushActivities(bool forced);
// Adds CUPTI's dropped-record count for the given context/stream to the stats.
void CountDroppedRecords(void* context, uint32_t stream_id);

}  // namespace gpuperf::inject
