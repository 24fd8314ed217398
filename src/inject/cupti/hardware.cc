#include "inject/cupti/hardware.h"

#include <atomic>

#include "inject/cupti/callbacks.h"
#include "inject/cupti/pc_sampling.h"
#include "inject/cupti/range_profiler.h"
#include "inject/log.h"
#include "inject/recorder.h"

namespace gpuperf::inject {
namespace {

std::atomic<bool> g_metrics{false};
std::atomic<bool> g_pc_sampling{false};

void Observe(int domain, uint32_t cbid, const void* data) {
  if (g_metrics.load(std::memory_order_relaxed)) RangeProfilerCallback(domain, cbid, data);
  if (g_pc_sampling.load(std::memory_order_relaxed)) PcSamplingCallback(domain, cbid, data);
}

}  // namespace

void StartHardwareProfilers(Recorder& recorder) {
  const Config& config = recorder.config;
  bool pc_sampling = config.pc_sampling;
  if (!config.metric_set.empty() && pc_sampling) {
    // CUPTI refuses PC sampling once its profiler API is initialized.
    LogOnce("PC sampling and hardware metrics cannot share one run: measuring metrics only");
    pc_sampling = false;
  }
  const bool metrics = !config.metric_set.empty() && StartRangeProfiler(recorder);
  pc_sampling = pc_sampling && StartPcSampling(recorder);
  g_metrics.store(metrics);
  g_pc_sampling.store(pc_sampling);
  if (metrics || pc_sampling) SetCallbackObserver(Observe);
}

void CollectHardwareData() {
  if (g_pc_sampling.load()) CollectPcSamples();
}

void FinishHardwareProfilers() {
  if (g_metrics.load()) FinishRangeProfiler();
  if (g_pc_sampling.load()) FinishPcSampling();
}

}  // namespace gpuperf::inject
