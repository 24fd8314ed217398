// The model behind the pprof export (export/pprof_export.h): every launch site of a trace
// with what it cost (launch_costs.h), the names that turn its stack into frames, the
// recording's time span and wall-clock start, and what the join and the recording lost.
// Built by streaming the trace once through the Correlator (analyze/join/correlation.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/flame/launch_costs.h"
#include "analyze/join/correlation.h"
#include "analyze/join/data_loss.h"
#include "analyze/join/launch_sink.h"
#include "gpuperf/records.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

struct LaunchProfile {
  std::vector<LaunchCost> costs;  // one per site, sorted by LaunchSite

  StackNames names;  // what names the sites' stacks

  // The CLOCK_MONOTONIC span of the processes and the GPU work, when there is one.
  std::optional<uint64_t> first_ns, last_ns;
  // CLOCK_REALTIME minus CLOCK_MONOTONIC, from the trace's first pair of clock readings.
  std::optional<int64_t> realtime_offset_ns;

  JoinCounts joins;      // every GPU activity's join to its launch
  DataLossSummary loss;  // what the recording and the reading lost
};

// Streams the trace FILE or DIR once; `report`, when given, gets what the reading found.
Result<LaunchProfile> BuildLaunchProfile(const std::string& trace_path,
                                         ReadReport* report = nullptr);

// The same from a trace in memory.
LaunchProfile BuildLaunchProfile(const Trace& trace);

}  // namespace gpuperf
