#include "inject/preload_stats.h"

#include <dlfcn.h>

#include <atomic>

#include "inject/stats.h"
#include "preload/preload_abi.h"

namespace gpuperf::inject {

namespace {

// One of the preload library's counters, or null without that library. Looked up each time:
// cheap next to a snapshot or a period, and no state to keep across fork or exec.
const std::atomic<unsigned long long>* PreloadCounter(const char* symbol) {
  return static_cast<const std::atomic<unsigned long long>*>(dlsym(RTLD_DEFAULT, symbol));
}

}  // namespace

void UpdatePreloadStats() {
  const auto* refusals = PreloadCounter(GPUPERF_PRELOAD_REFUSALS_SYMBOL);
  if (refusals == nullptr) return;
  SetStat(StatId::cupti_clients_refused, refusals->load(std::memory_order_relaxed));
}

bool PreloadSawBufferTakeover() {
  const auto* takeovers = PreloadCounter(GPUPERF_PRELOAD_TAKEOVERS_SYMBOL);
  return takeovers != nullptr && takeovers->load(std::memory_order_relaxed) != 0;
}

}  // namespace gpuperf::inject
