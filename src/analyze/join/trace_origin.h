// The trace's first timestamp, from which `--from` and `--to` count (report and export
// alike): the earliest start of a process, an API call, a piece of GPU work, a
// synchronization or an NVTX range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

#include "gpuperf/records.h"

namespace gpuperf {

class TraceOrigin {
 public:
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

  void Add(uint64_t ns) {
    if (ns != 0) ns_ = std::min(ns_, ns);
  }
  void AddProcesses(std::span<const ProcessRecord> records) {
    for (const ProcessRecord& r : records) Add(r.start_ns);
  }
  template <class Record>
  void AddStarts(std::span<const Record> records) {
    for (const Record& r : records) Add(r.start_ns);
  }
  // kNone when nothing was seen.
  uint64_t ns() const { return ns_; }

 private:
  uint64_t ns_ = kNone;
};

}  // namespace gpuperf
