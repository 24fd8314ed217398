// CUPTI activity tracing: buffers, the kinds we enable, and delivery to the writer.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct Recorder;
class Translator;

// The translator for `recorder`'s records (a new one when the recorder is new: each attach
// window has its own names). RegisterActivityCallbacks calls it; EnableCallbacks needs it.
void PrepareTranslator(Recorder& recorder);
// Prepares the translator and registers the timestamp and buffer callbacks.
// Must run before any enable.
bool RegisterActivityCallbacks(Recorder& recorder);
// The translator RegisterActivityCallbacks created; callers hold the NameTable lock while
// they use it, as the buffer path does.
Translator& ActivityTranslator();
// Enables (or disables) the configured activity kinds; all but CONCURRENT_KERNEL when
// `kernels` is false.
void EnableActivities(Recorder& recorder, bool enable, bool kernels = true);
// For a subscription made after CUDA started (an attach window): CUPTI describes devices and
// contexts only when they appear, so the ones that exist already are asked for.
void DumpExistingDevicesAndContexts();
// Asks CUPTI for kernel times from the Hardware Event System (Config::hw_trace), once. CUPTI
// takes this only between cuInit's end and the first context: call it from the
// CU_INIT_FINISHED callback. Counts the outcome; where the GPU or driver lacks it, says so
// once and leaves CUPTI's usual way.
void UseHardwareKernelTimes();
// Hands every buffer with records to the translator; `forced` also returns
// incomplete records (CUPTI's at-exit mode).
void FlushActivities(bool forced);
// CUPTI's own periodic flush of full buffers, every `period_ms` (0: CUPTI's heuristics).
void SetActivityFlushPeriod(uint32_t period_ms);
// Writer thread, every period while the default activity kinds are on: notices, once, that
// another CUPTI client registered its own buffer callbacks after ours (a thread's linked calls
// outran its last buffer without CUPTI asking for another), says so in one line and counts it.
void CheckActivityOwner();
// Says once that another CUPTI client took the activity buffers, and counts it
// (activity_buffers_taken): from CheckActivityOwner, or when libgpuperf_preload.so saw the
// registration (preload_stats.h).
void ReportActivityBuffersTaken();
// Adds CUPTI's dropped-record count for the given context/stream to the stats.
void CountDroppedRecords(void* context, uint32_t stream_id);

}  // namespace gpuperf::inject
