// gpuperf export: a trace as a timeline for ui.perfetto.dev (Perfetto protobuf, the
// default) or chrome://tracing (Chrome JSON, optionally gzipped).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "base/units.h"
#include "cli/command.h"
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

Status Run(const std::string& trace, std::string format_name, std::string output) {
  TimelineFormat format = TimelineFormat::kPerfetto;
  if (format_name == "chrome" || format_name == "json") {
    format = TimelineFormat::kChromeJson;
  } else if (format_name == "perfetto") {
    format = TimelineFormat::kPerfetto;
  } else if (format_name.empty()) {
    if (!output.empty()) format = FormatFromName(output).value_or(TimelineFormat::kPerfetto);
  } else {
    return Error(StatusCode::kInvalidArgument,
                 "unknown format '" + format_name + "' (use perfetto or chrome)");
  }
  if (output.empty()) output = DefaultOutput(trace, format);

  std::unique_ptr<std::ostream> out;
  GzipFileStream* gzip = nullptr;
  if (EndsWith(output, ".gz")) {
    GP_ASSIGN_OR_RETURN(auto stream, GzipFileStream::Create(output));
    gzip = stream.get();
    out = std::move(stream);
  } else {
    auto file = std::make_unique<std::ofstream>(output, std::ios::binary | std::ios::trunc);
    if (!*file) return Error(StatusCode::kIoError, "cannot create " + output);
    out = std::move(file);
  }

  TimelineStats stats;
  ReadReport report;
  Status status = ExportTimelineFile(trace, format, TimelineOptions{}, *out, &stats, &report);
  PrintReadWarnings(report);
  if (status.ok()) {
    out->flush();
    if (!*out) status = Error(StatusCode::kIoError, "cannot write " + output);
  }
  if (gzip) {
    Status closed = gzip->Close();
    if (status.ok()) status = closed;
  }
  out.reset();
  if (!status.ok()) {
    std::error_code ignored;
    std::filesystem::remove(output, ignored);  // never leave a half-written timeline
    return status;
  }
  std::error_code size_error;
  const uintmax_t size = std::filesystem::file_size(output, size_error);
  std::printf("wrote %s: %s, %s slices, %s flow arrows, %u tracks\n", output.c_str(),
              FormatBytes(size_error ? 0 : size).c_str(), FormatCount(stats.slices).c_str(),
              FormatCount(stats.flows).c_str(), stats.tracks);
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
  cmd->add_option("trace", *trace, "Trace file (.gpt) or directory of trace files")->required();
  cmd->add_option("--format,-f", *format,
                  "perfetto or chrome (default: from the output name, else perfetto)");
  cmd->add_option("-o,--output", *output,
                  "Output file (default: next to the trace, .perfetto-trace or .json.gz)");
  cmd->callback([=] {
    Status status = Run(*trace, *format, *output);
    *exit_code = status.ok() ? kExitOk : ReportError(status);
  });
}

}  // namespace

GPUPERF_COMMAND(40, RegisterExport);

}  // namespace gpuperf::cli
