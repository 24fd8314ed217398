// The injection library's process-wide state, created once by InitializeInjection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "inject/config.h"
#include "inject/cupti/translate.h"
#include "inject/name_table.h"
#include "inject/writer_thread.h"

namespace gpuperf::inject {

struct Recorder {
  Config config;
  uint32_t pid = 0;
  uint64_t start_ns = 0;
  NameTable names;
  std::mutex translate_mutex;  // CUPTI may complete buffers on several threads
  std::unique_ptr<Translator> translator;
  WriterThread writer;
  std::atomic<bool> capturing{false};  // inside the capture range
  std::atomic<bool> disabled{false};   // a forked child, or shutting down
  std::atomic<bool> finished{false};
  bool subscribed = false;
  // API records come from our callbacks (they need our subscription), not CUPTI's kinds.
  bool ApiFromCallbacks() const { return subscribed && config.api_from_callbacks; }
};

// nullptr until InitializeInjection succeeded.
Recorder* GetRecorder();

uint64_t MonotonicNs();

}  // namespace gpuperf::inject
