// gpuperf export: a trace as a timeline for ui.perfetto.dev (Perfetto protobuf, the
// default) or chrome://tracing (Chrome JSON, optionally gzipped).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/units.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/output_file.h"
#include "export/gzip_stream.h"
#include "export/timeline_export.h"

namespace gpuperf::cli {
namespace {

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The format an output name asks for, if it asks for one.
std::optional<TimelineFormat> FormatFromName(const std::string& path) {
  std::string name = EndsWith(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (EndsWith(name, ".json")) return TimelineFormat::kChromeJson;
  if (EndsWith(name, ".perfetto-trace") || EndsWith(name, ".pftrace") || EndsWith(name, ".pb")) {
    return TimelineFormat::kPerfetto;
  }
  return std::nullopt;
}

// Next to the trace: run.gpt -> run.perfetto-trace; a directory out/ -> out.json.gz.
std::string DefaultOutput(const std::string& trace, TimelineFormat format) {
  std::filesystem::path path(trace);
  if (!path.has_filename()) path = path.parent_path();  // "out/" -> "out"
  if (path.extension() == ".gpt") path.replace_extension();
  return path.string() + (format == TimelineFormat::kPerfetto ? ".perfetto-trace" : ".json.gz");
}

// The format --format names, else the one the output name asks for; a name whose
// extension says nothing we know is refused rather than filled with a surprise.
Result<TimelineFormat> ChooseFormat(const std::string& format_name, const std::string& output) {
  if (format_name == "chrome" || format_name == "json") return TimelineFormat::kChromeJson;
  if (format_name == "perfetto") return TimelineFormat::kPerfetto;
  if (!format_name.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 "unknown format '" + format_name + "' (use perfetto or chrome)");
  }
  if (output.empty() || output == "-") return TimelineFormat::kPerfetto;
  if (auto format = FormatFromName(output)) return *format;
  if (std::filesystem::path(output).extension().empty()) return TimelineFormat::kPerfetto;
  return Error(StatusCode::kInvalidArgument,
               "cannot tell the timeline format from the name " + output +
                   ": use .perfetto-trace, .pftrace or .pb (Perfetto), .json or .json.gz "
                   "(Chrome JSON), or --format perfetto|chrome");
}

Status Run(const std::string& trace, const std::string& format_name, std::string output,
           bool python_internals) {
  GP_ASSIGN_OR_RETURN(const TimelineFormat format, ChooseFormat(format_name, output));
  if (output.empty()) output = DefaultOutput(trace, format);
  const bool named_format = !format_name.empty() || FormatFromName(output).has_value();
  const bool to_stdout = output == "-";
  if (to_stdout && isatty(STDOUT_FILENO)) {
    return Error(StatusCode::kInvalidArgument,
                 "not writing a binary timeline to a terminal: use -o trace.perfetto-trace");
  }

  GP_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, OutputFile::Open(output, trace));
  std::unique_ptr<GzipStream> gzip;
  if (EndsWith(output, ".gz")) {
    GP_ASSIGN_OR_RETURN(gzip, GzipStream::Create(file->stream()));
  }
  std::ostream& out = gzip ? static_cast<std::ostream&>(*gzip) : file->stream();

  TimelineStats stats;
  ReadReport report;
  TimelineOptions options;
  options.display.python_internals = python_internals;
  Status status = ExportTimelineFile(trace, format, options, out, &stats, &report);
  PrintReadWarnings(report);
  if (gzip) {
    Status closed = gzip->Close();
    if (status.ok()) status = closed;
  }
  GP_RETURN_IF_ERROR(file->Finish(status));
  // A name that does not show the format gets it spelled out.
  const std::string what =
      named_format ? file->name()
                   : file->name() + (format == TimelineFormat::kPerfetto ? " (Perfetto protobuf)"
                                                                         : " (Chrome JSON)");
  std::fprintf(to_stdout ? stderr : stdout, "wrote %s: %s, %s slices, %s flow arrows, %u tracks\n",
               what.c_str(), FormatBytes(file->bytes_written()).c_str(),
               FormatCount(stats.slices).c_str(), FormatCount(stats.flows).c_str(), stats.tracks);
  return Status::Ok();
}

void RegisterExport(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "export",
      "Write a timeline: Perfetto protobuf (default; open in ui.perfetto.dev) or Chrome JSON "
      "(chrome://tracing, .json or .json.gz)");
  auto trace = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto python_internals = std::make_shared<bool>(false);
  cmd->add_option("trace", *trace, "Trace file (.gpt) or directory of trace files")->required();
  cmd->add_option("--format,-f", *format,
                  "perfetto or chrome (default: from the output name, else perfetto)");
  cmd->add_option("-o,--output", *output,
                  "Output file: .perfetto-trace, .pftrace, .pb, .json or .json.gz; - for stdout "
                  "(default: next to the trace, .perfetto-trace or .json.gz)");
  cmd->add_flag("--python-internals", *python_internals,
                "Keep the Python interpreter's own frames in launch stacks with Python frames");
  cmd->callback([=] {
    Status status = Run(*trace, *format, *output, *python_internals);
    *exit_code = status.ok() ? kExitOk : ReportError(ExplainNotATrace(status, *trace));
  });
}

}  // namespace

GPUPERF_COMMAND(40, RegisterExport);

}  // namespace gpuperf::cli
