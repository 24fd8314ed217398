#include "export/timeline_export.h"

#include <functional>
#include <memory>

#include "export/chrome_json_writer.h"
#include "export/perfetto_writer.h"

namespace gpuperf {
namespace {

std::unique_ptr<TimelineWriter> MakeWriter(TimelineFormat format, std::ostream& out) {
  return format == TimelineFormat::kPerfetto ? MakePerfettoWriter(out) : MakeChromeJsonWriter(out);
}

// Draws the timeline analysis on the writer of `format`; `read` feeds every record of
// the trace to a sink.
Status Export(const std::function<Status(RecordSink&)>& read, TimelineFormat format,
              const TimelineOptions& options, std::ostream& out, TimelineStats* stats,
              const ReadReport* read_report) {
  std::unique_ptr<TimelineWriter> writer = MakeWriter(format, out);
  return BuildTimeline(read, options, *writer, stats, read_report);
}

}  // namespace

Status ExportTimelineFile(const std::string& trace_path, TimelineFormat format,
                          const TimelineOptions& options, std::ostream& out, TimelineStats* stats,
                          ReadReport* report) {
  bool first_pass = true;
  ReadReport first_report;
  Status status = Export(
      [&](RecordSink& sink) {
        // Both passes see the same damage; report it once.
        ReadReport pass_report;
        Status status = ReadTrace(trace_path, sink, &pass_report);
        if (first_pass) first_report = pass_report;
        first_pass = false;
        return status;
      },
      format, options, out, stats, &first_report);
  if (report) *report = first_report;
  return status;
}

Status ExportPerfetto(const Trace& trace, const TimelineOptions& options, std::ostream& out,
                      TimelineStats* stats) {
  return Export(
      [&](RecordSink& sink) {
        ReplayTrace(trace, sink);
        return Status::Ok();
      },
      TimelineFormat::kPerfetto, options, out, stats, &trace.read_report);
}

Status ExportChromeJson(const Trace& trace, const TimelineOptions& options, std::ostream& out,
                        TimelineStats* stats) {
  return Export(
      [&](RecordSink& sink) {
        ReplayTrace(trace, sink);
        return Status::Ok();
      },
      TimelineFormat::kChromeJson, options, out, stats, &trace.read_report);
}

}  // namespace gpuperf
