// Timeline export: a trace as a Perfetto protobuf trace or a Chrome JSON trace.
//
// Streaming, in the two passes of the timeline analysis (analyze/timeline/timeline_scan.h and
// analyze/timeline/timeline_builder.h), so a trace of any length exports in memory bounded by its
// shape, not its length; the writers here only serialize its events.
#pragma once

#include <ostream>
#include <string>

#include "analyze/timeline/timeline_builder.h"
#include "export/perfetto_writer.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

enum class TimelineFormat { kPerfetto, kChromeJson };

// About how many bytes a timeline of `drawn` events takes in `format` (Perfetto as
// written: compressed bundles; Chrome JSON plain or gzipped), from the sizes measured on
// synthetic and real traces (docs/timeline.md).
uint64_t EstimateTimelineBytes(TimelineFormat format, bool gzipped,
                               const TimelineEventCounts& drawn);

// Reads FILE or DIR twice (three times with a window) and writes the timeline to `out`.
Status ExportTimelineFile(const std::string& trace_path, TimelineFormat format,
                          const TimelineOptions& options, std::ostream& out,
                          TimelineStats* stats = nullptr, ReadReport* report = nullptr);

// The same from a trace already in memory.
Status ExportPerfetto(const Trace& trace, const TimelineOptions& options, std::ostream& out,
                      TimelineStats* stats = nullptr, const PerfettoOptions& perfetto = {});
Status ExportChromeJson(const Trace& trace, const TimelineOptions& options, std::ostream& out,
                        TimelineStats* stats = nullptr);

}  // namespace gpuperf
