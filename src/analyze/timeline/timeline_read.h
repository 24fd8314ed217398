// The timeline analysis on a whole trace (timeline_builder.h's BuildTimeline, drawn on a
// TimelineWriter of src/export/): a file or directory on disk, or a trace in memory. Processes
// of several hosts are put on one clock first (analyze/ranks, docs/multi-rank.md).
#pragma once

#include <string>

#include "analyze/timeline/timeline_builder.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

// Reads FILE or DIR twice (three times with a window), decoding chunks on a second thread
// while this one draws. `report`, when given, gets what the reading found (once, though
// both passes see it) and the clock alignment's warnings.
Status DrawTimelineFile(const std::string& trace_path, const TimelineOptions& options,
                        TimelineWriter& writer, TimelineStats* stats = nullptr,
                        ReadReport* report = nullptr);

// The same from a trace already in memory.
Status DrawTimeline(const Trace& trace, const TimelineOptions& options, TimelineWriter& writer,
                    TimelineStats* stats = nullptr);

}  // namespace gpuperf
