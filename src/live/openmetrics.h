// The live pages as Prometheus metrics (`gpuperf serve`): OpenMetrics 1.0 text when the
// scraper asks for it (Prometheus does), else the Prometheus 0.0.4 text format. Counters are
// counters (`_total`), gauges are gauges; device series carry DCGM's labels (gpu, UUID,
// Hostname) plus pid and rank, so they join dcgm-exporter's; kernel names appear only for
// each process's top kernels by GPU time (docs/live.md lists every metric).
#pragma once

#include <cstdint>
#include <string>

#include "live/live_model.h"

namespace gpuperf::live {

struct MetricsOptions {
  uint32_t top_kernels = 20;  // per process, at most kMaxKernels
  bool openmetrics = false;
};

std::string RenderMetrics(const LiveModel& model, const MetricsOptions& options);

// The Content-Type of what RenderMetrics writes.
const char* MetricsContentType(bool openmetrics);

// Whether an Accept header asks for OpenMetrics.
bool WantsOpenMetrics(const std::string& accept);

}  // namespace gpuperf::live
