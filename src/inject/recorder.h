// The injection library's process-wide state, created once by InitializeInjection.
//
// Dependencies point one way, from the CUPTI edge inwards:
//
//   injection.cc (InitializeInjection: wires everything, owns the Recorder)
//     -> cupti/     the only code that includes CUPTI headers or calls cupti*; it keeps
//                   its own state (subscriber, translator) and reads the Recorder
//     -> recorder.h config, names, writer thread, capture flags: CUPTI-free
//     -> stack/, writer_thread, thread_buffers, name_table, stats, log: CUPTI-free
//
// So nothing here includes a header of cupti/; cupti/ includes this one.
#pragma once

#include <atomic>
#include <cstdint>

#include "inject/config.h"
#include "inject/live_recorder.h"
#include "inject/name_table.h"
#include "inject/writer_thread.h"

namespace gpuperf::inject {

struct Recorder {
  Config config;
  uint32_t pid = 0;
  uint64_t start_ns = 0;
  NameTable names;
  WriterThread writer;
  LiveRecorder live;                   // the writer thread keeps it
  std::atomic<bool> capturing{false};  // inside the capture range
  std::atomic<bool> disabled{false};   // a forked child, or shutting down
  std::atomic<bool> finished{false};
  bool subscribed = false;
  // API records come from our callbacks (they need our subscription), not CUPTI's kinds.
  bool ApiFromCallbacks() const { return subscribed && config.api_from_callbacks; }
};

class PowerSampler;

// nullptr until InitializeInjection (or an attach window) succeeded.
Recorder* GetRecorder();

// `r` is the recording GetRecorder() returns from now on, with `power` its power sampler
// (null: none): the exit hook finishes that one (attach windows, attach_window.h).
void PublishRecorder(Recorder* r, PowerSampler* power);

// What the writer checks every period while recording, whatever started it: new modules
// for PyTorch's autograd link, another CUPTI client taking the activity buffers.
void PeriodicChecks(Recorder& r, bool capturing);

// Once per process: the exit hook that finishes the published recording's trace, and the
// fork hooks that keep a forked child from touching it.
void InstallProcessHooks();

uint64_t MonotonicNs();

}  // namespace gpuperf::inject
