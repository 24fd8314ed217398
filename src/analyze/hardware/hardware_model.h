// The hardware part of a report: per kernel (or per NVTX range / time window) the metrics
// `gpuperf metrics` measured, with a one-word bound, and per kernel the source lines that
// `record --pc-sampling` found hot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf {

struct MetricValue {
  std::string metric;  // CUPTI's name
  double value = 0;
};

// "memory", "compute" or "latency" (empty: the metrics that decide were not measured), and
// the numbers behind it in one sentence.
struct BoundVerdict {
  std::string bound;
  std::string reason;
};

struct HardwareRow {
  MetricRangeKind kind = MetricRangeKind::kUnknown;
  std::string name;  // kernel (mangled) or range name
  std::string display_name;
  std::string metric_set;
  uint64_t ranges = 0;  // launches or ranges measured
  uint32_t passes = 0;
  bool serialized = false;           // kernel replay: ran alone
  double duration_ns = 0;            // summed gpu__time_duration over the ranges (0: not measured)
  std::vector<MetricValue> metrics;  // each metric's mean over the ranges, weighted by duration
  BoundVerdict verdict;

  // By CUPTI name or gpuperf's short name (base/metric_sets.h).
  std::optional<double> Get(std::string_view name) const;
};

using StallList = std::vector<std::pair<std::string, uint64_t>>;  // most samples first

struct HotLineRow {
  std::string file;  // empty: no line information (pc_offset says where)
  uint32_t line = 0;
  uint64_t pc_offset = 0;
  uint64_t samples = 0;
  double fraction = 0;  // of the kernel's samples
  StallList stalls;
};

struct PcKernelRow {
  std::string name;
  std::string display_name;
  uint64_t samples = 0;
  uint64_t not_issued = 0;  // of `samples`: the warp's scheduler issued nothing
  double fraction = 0;      // of all samples
  bool has_lines = false;
  StallList stalls;
  std::vector<HotLineRow> lines;  // the hottest first
};

}  // namespace gpuperf
