#include "analyze/timeline/timeline_read.h"

#include <vector>

#include "analyze/ranks/clock_shift_sink.h"
#include "analyze/ranks/job_ranks.h"

namespace gpuperf {

Status DrawTimelineFile(const std::string& trace_path, const TimelineOptions& options,
                        TimelineWriter& writer, TimelineStats* stats, ReadReport* report) {
  // Processes of several hosts go on one clock (docs/multi-rank.md).
  GP_ASSIGN_OR_RETURN(RankScan scan, ScanRanks(trace_path));
  GP_ASSIGN_OR_RETURN(ClockAlignment clocks, AlignTraceClocks(trace_path, scan));
  for (const std::string& warning : clocks.warnings) {
    if (report) report->warnings.push_back("clock alignment: " + warning);
  }
  bool first_pass = true;
  ReadReport first_report;
  Status status = BuildTimeline(
      [&](RecordSink& sink, std::span<const uint16_t> chunk_types) {
        // Both passes see the same damage; report it once.
        ReadReport pass_report;
        // The reader decodes chunks on the other cores while this thread draws.
        Status status = ReadTraceAligned(trace_path, clocks, sink, &pass_report, chunk_types);
        if (first_pass) first_report = pass_report;
        first_pass = false;
        return status;
      },
      options, writer, stats, &first_report);
  if (report) {
    std::vector<std::string> clock_warnings = std::move(report->warnings);
    *report = first_report;
    report->warnings.insert(report->warnings.end(), clock_warnings.begin(), clock_warnings.end());
  }
  return status;
}

Status DrawTimeline(const Trace& trace, const TimelineOptions& options, TimelineWriter& writer,
                    TimelineStats* stats) {
  const ClockAlignment clocks = AlignTraceClocks(trace, ScanRanks(trace));
  return BuildTimeline(
      [&](RecordSink& sink, std::span<const uint16_t>) {
        if (clocks.identity()) {
          ReplayTrace(trace, sink);
        } else {
          ClockShiftSink shifted(sink, clocks);
          ReplayTrace(trace, shifted);
        }
        return Status::Ok();
      },
      options, writer, stats, &trace.read_report);
}

}  // namespace gpuperf
