// The hardware metric sets of `gpuperf metrics --set` and the metrics gpuperf knows by a
// short name (reports, `diff --fail-if kernel:NAME:dram_pct<50`). Shared by the injection
// library, which asks CUPTI for a set, and the offline tools, which read the values back.
//
// Every set exists in two forms: per kernel (kernel replay: as many passes as the metrics
// need, each kernel run alone once per pass) and per range (NVTX ranges or time windows:
// nothing is replayed, so the set must fit one pass). The names were checked against
// CUDA 13's host API for GH100 (src/inject/cupti/metric_sets_cupti_test.cc: every name valid, every
// range set one pass).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf {

enum class MetricUnitKind { kPercent, kBytesPerSecond, kBytes, kNanoseconds, kPerCycle };

// A metric gpuperf reads by name.
struct KnownMetric {
  std::string_view short_name;  // "dram_pct"
  std::string_view cupti_name;  // "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
  std::string_view label;       // "DRAM throughput"
  MetricUnitKind unit;
};

std::span<const KnownMetric> KnownMetrics();
// By short or CUPTI name; nullptr when unknown.
const KnownMetric* FindKnownMetric(std::string_view name);

enum class SetScope { kPerKernel, kPerRange };

// The set's CUPTI metric names, or empty for an unknown set name.
std::vector<std::string_view> MetricSet(std::string_view set, SetScope scope);
// "basic, memory, compute, tensor".
std::string MetricSetNames();

}  // namespace gpuperf
