// Timeline export: a trace as a Perfetto protobuf trace or a Chrome JSON trace.
//
// The timeline analysis (analyze/timeline/timeline_read.h) reads the trace in two passes
// (timeline_scan.h, timeline_builder.h) and draws its events on a TimelineWriter as it goes, so
// a trace of any length exports in memory bounded by its shape, not its length; the writers
// made here only serialize those events.
#pragma once

#include <memory>
#include <ostream>

#include "analyze/timeline/timeline_builder.h"
#include "analyze/timeline/timeline_events.h"
#include "export/perfetto_writer.h"

namespace gpuperf {

enum class TimelineFormat { kPerfetto, kChromeJson };

// About how many bytes a timeline of `drawn` events takes in `format` (Perfetto as
// written: compressed bundles; Chrome JSON plain or gzipped), from the sizes measured on
// synthetic and real traces (docs/timeline.md).
uint64_t EstimateTimelineBytes(TimelineFormat format, bool gzipped,
                               const TimelineEventCounts& drawn);

// The writer of `format` on `out` (Perfetto as `perfetto` says).
std::unique_ptr<TimelineWriter> MakeTimelineWriter(TimelineFormat format, std::ostream& out,
                                                   const PerfettoOptions& perfetto = {});

}  // namespace gpuperf
