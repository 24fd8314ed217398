#include "export/timeline_export.h"

#include <functional>
#include <memory>

#include "analyze/ranks/clock_shift_sink.h"
#include "analyze/ranks/job_ranks.h"
#include "export/chrome_json_writer.h"
#include "export/perfetto_writer.h"
#include "format/read_ahead.h"

namespace gpuperf {
namespace {

std::unique_ptr<TimelineWriter> MakeWriter(TimelineFormat format, std::ostream& out,
                                           const PerfettoOptions& perfetto) {
  return format == TimelineFormat::kPerfetto ? MakePerfettoWriter(out, perfetto)
                                             : MakeChromeJsonWriter(out);
}

// Draws the timeline analysis on the writer of `format`; `read` feeds every record of
// the trace to a sink.
Status Export(const TimelineRead& read, TimelineFormat format, const TimelineOptions& options,
              std::ostream& out, TimelineStats* stats, const ReadReport* read_report,
              const PerfettoOptions& perfetto = {}) {
  std::unique_ptr<TimelineWriter> writer = MakeWriter(format, out, perfetto);
  return BuildTimeline(read, options, *writer, stats, read_report);
}

// Replays an in-memory trace with several hosts' processes on one clock.
void ReplayAligned(const Trace& trace, const ClockAlignment& clocks, RecordSink& sink) {
  if (clocks.identity()) {
    ReplayTrace(trace, sink);
  } else {
    ClockShiftSink shifted(sink, clocks);
    ReplayTrace(trace, shifted);
  }
}

ClockAlignment TraceClocks(const Trace& trace) {
  return AlignTraceClocks(trace, ScanRanks(trace));
}

}  // namespace

uint64_t EstimateTimelineBytes(TimelineFormat format, bool gzipped,
                               const TimelineEventCounts& drawn) {
  // Bytes per event: a launch call with its arrow, a piece of GPU work, an NVTX range.
  struct Cost {
    double api, gpu, nvtx;
  };
  const Cost cost = format == TimelineFormat::kPerfetto ? Cost{12, 19, 10}
                    : gzipped                           ? Cost{24, 30, 12}
                                                        : Cost{310, 380, 150};
  return static_cast<uint64_t>(cost.api * static_cast<double>(drawn.api_calls) +
                               cost.gpu *
                                   static_cast<double>(drawn.kernels + drawn.copies + drawn.sets) +
                               cost.nvtx * static_cast<double>(drawn.nvtx));
}

Status ExportTimelineFile(const std::string& trace_path, TimelineFormat format,
                          const TimelineOptions& options, std::ostream& out, TimelineStats* stats,
                          ReadReport* report) {
  // Processes of several hosts go on one clock (docs/multi-rank.md).
  GP_ASSIGN_OR_RETURN(RankScan scan, ScanRanks(trace_path));
  GP_ASSIGN_OR_RETURN(ClockAlignment clocks, AlignTraceClocks(trace_path, scan));
  for (const std::string& warning : clocks.warnings) {
    if (report) report->warnings.push_back("clock alignment: " + warning);
  }
  bool first_pass = true;
  ReadReport first_report;
  Status status = Export(
      [&](RecordSink& sink, std::span<const uint16_t> chunk_types) {
        // Both passes see the same damage; report it once.
        ReadReport pass_report;
        // Chunks are read and decoded on a second thread while this one draws.
        Status status = ReadAhead(
            [&](RecordSink& ahead) {
              return ReadTraceAligned(trace_path, clocks, ahead, &pass_report, chunk_types);
            },
            sink);
        if (first_pass) first_report = pass_report;
        first_pass = false;
        return status;
      },
      format, options, out, stats, &first_report);
  if (report) {
    std::vector<std::string> clock_warnings = std::move(report->warnings);
    *report = first_report;
    report->warnings.insert(report->warnings.end(), clock_warnings.begin(), clock_warnings.end());
  }
  return status;
}

Status ExportPerfetto(const Trace& trace, const TimelineOptions& options, std::ostream& out,
                      TimelineStats* stats, const PerfettoOptions& perfetto) {
  return Export(
      [&, clocks = TraceClocks(trace)](RecordSink& sink, std::span<const uint16_t>) {
        ReplayAligned(trace, clocks, sink);
        return Status::Ok();
      },
      TimelineFormat::kPerfetto, options, out, stats, &trace.read_report, perfetto);
}

Status ExportChromeJson(const Trace& trace, const TimelineOptions& options, std::ostream& out,
                        TimelineStats* stats) {
  return Export(
      [&, clocks = TraceClocks(trace)](RecordSink& sink, std::span<const uint16_t>) {
        ReplayAligned(trace, clocks, sink);
        return Status::Ok();
      },
      TimelineFormat::kChromeJson, options, out, stats, &trace.read_report);
}

}  // namespace gpuperf
