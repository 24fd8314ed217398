// gpuperf export: a trace as a timeline for ui.perfetto.dev (Perfetto protobuf, the
// default) or chrome://tracing (Chrome JSON, optionally gzipped), or as a pprof profile
// of GPU time per launch stack (go tool pprof, Pyroscope, Parca), or as a dataset of Parquet
// tables that SQL engines read (docs/parquet.md).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "analyze/flame/launch_profile.h"
#include "analyze/timeline/timeline_read.h"
#include "base/quantity.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/other_outputs.h"
#include "cli/output_file.h"
#include "cli/quantity_options.h"
#include "export/gzip_stream.h"
#include "export/parquet/dataset_export.h"
#include "export/pprof_export.h"
#include "export/timeline_export.h"

namespace gpuperf::cli {
namespace {

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

enum class ExportFormat { kPerfetto, kChromeJson, kPprof, kParquet };

// The format an output name asks for, if it asks for one.
std::optional<ExportFormat> FormatFromName(const std::string& path) {
  // Before the timeline names: ".pb.gz" is pprof's usual name, not a gzipped ".pb".
  if (EndsWith(path, ".pb.gz") || EndsWith(path, ".pprof")) return ExportFormat::kPprof;
  if (EndsWith(path, ".parquet") || EndsWith(path, ".parquet/")) return ExportFormat::kParquet;
  std::string name = EndsWith(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (EndsWith(name, ".json")) return ExportFormat::kChromeJson;
  if (EndsWith(name, ".perfetto-trace") || EndsWith(name, ".pftrace") || EndsWith(name, ".pb")) {
    return ExportFormat::kPerfetto;
  }
  return std::nullopt;
}

// Next to the trace: run.gpt -> run.perfetto-trace; a directory out/ -> out.json.gz.
std::string DefaultOutput(const std::string& trace, ExportFormat format) {
  std::filesystem::path path(trace);
  if (!path.has_filename()) path = path.parent_path();  // "out/" -> "out"
  if (path.extension() == ".gpt") path.replace_extension();
  switch (format) {
    case ExportFormat::kPerfetto:
      return path.string() + ".perfetto-trace";
    case ExportFormat::kChromeJson:
      return path.string() + ".json.gz";
    case ExportFormat::kPprof:
      return path.string() + ".pb.gz";
    case ExportFormat::kParquet:
      return path.string() + ".parquet";
  }
  return path.string();
}

const char* FormatName(ExportFormat format) {
  switch (format) {
    case ExportFormat::kPerfetto:
      return "Perfetto protobuf";
    case ExportFormat::kChromeJson:
      return "Chrome JSON";
    case ExportFormat::kPprof:
      return "pprof";
    case ExportFormat::kParquet:
      return "Parquet dataset";
  }
  return "";
}

// The format --format names, else the one the output name asks for; a name whose
// extension says nothing we know is refused rather than filled with a surprise.
Result<ExportFormat> ChooseFormat(const std::string& format_name, const std::string& output) {
  if (format_name == "chrome" || format_name == "json") return ExportFormat::kChromeJson;
  if (format_name == "perfetto") return ExportFormat::kPerfetto;
  if (format_name == "pprof") return ExportFormat::kPprof;
  if (format_name == "parquet") return ExportFormat::kParquet;
  if (!format_name.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 "unknown format '" + format_name + "' (use perfetto, chrome, pprof or parquet)");
  }
  if (output.empty() || output == "-") return ExportFormat::kPerfetto;
  if (auto format = FormatFromName(output)) return *format;
  if (std::filesystem::path(output).extension().empty()) return ExportFormat::kPerfetto;
  return Error(
      StatusCode::kInvalidArgument,
      "cannot tell the output format from the name " + output +
          ": use .perfetto-trace, .pftrace or .pb (Perfetto), .json or .json.gz "
          "(Chrome JSON), .pb.gz or .pprof (pprof), .parquet (a directory of Parquet tables), "
          "or --format perfetto|chrome|pprof|parquet");
}

// Writes the profile, always gzipped (how pprof files are stored); returns its summary.
Result<std::string> WritePprof(const std::string& trace, const StackDisplayOptions& display,
                               std::ostream& out) {
  GP_ASSIGN_OR_RETURN(std::unique_ptr<GzipStream> gzip,
                      GzipStream::Create(out, /*level=*/6));  // profiles are small
  PprofStats stats;
  ReadReport report;
  Result<LaunchProfile> profile = BuildLaunchProfile(trace, &report);
  Status status =
      profile.ok() ? WritePprof(*profile, {.display = display}, *gzip, &stats) : profile.status();
  PrintReadWarnings(report);
  Status closed = gzip->Close();
  GP_RETURN_IF_ERROR(status);
  GP_RETURN_IF_ERROR(closed);
  return FormatCount(stats.samples) + " samples (" + FormatCount(stats.activities) +
         " GPU activities), " + FormatCount(stats.locations) + " locations, " +
         FormatCount(stats.functions) + " functions, " + FormatCount(stats.mappings) + " mappings";
}

// Past about this many bytes a timeline gets a note offering a window: ui.perfetto.dev
// holds traces up to about 2 GB. GPUPERF_TIMELINE_NOTE_BYTES sets another threshold
// (the tests' way to see the note without writing a gigabyte).
Result<uint64_t> LargeTimelineBytes() {
  if (const char* env = std::getenv("GPUPERF_TIMELINE_NOTE_BYTES"); env && *env) {
    return ParseBytes("GPUPERF_TIMELINE_NOTE_BYTES", env, SizeSpec{});
  }
  return uint64_t{1'000'000'000};
}

// What the command line asks of a window (timeline_window.h); the times already in ns.
struct WindowArgs {
  uint64_t from_ns = 0, to_ns = 0;
  bool has_from = false, has_to = false;
  std::string steps;
  uint64_t max_kernels = 0;
  bool any() const { return has_from || has_to || !steps.empty() || max_kernels; }
};

Result<TimelineWindowRequest> ParseWindow(const WindowArgs& args) {
  TimelineWindowRequest request;
  if (args.has_from) request.from_ns = args.from_ns;
  if (args.has_to) request.to_ns = args.to_ns;
  if (request.from_ns && request.to_ns && *request.to_ns <= *request.from_ns) {
    return Error(StatusCode::kInvalidArgument, "--to must be later than --from");
  }
  if (!args.steps.empty()) {
    // "A:B" or "A": the first and the last step drawn.
    const size_t colon = args.steps.find(':');
    const std::string first = args.steps.substr(0, colon);
    const std::string last = colon == std::string::npos ? first : args.steps.substr(colon + 1);
    constexpr CountSpec kStep{0, INT64_MAX};
    Result<uint64_t> a = ParseCount("--steps", first, kStep);
    Result<uint64_t> b = ParseCount("--steps", last, kStep);
    if (!a.ok() || !b.ok() || *b < *a) {
      return Error(
          StatusCode::kInvalidArgument,
          "--steps takes A:B (the first and the last step, A <= B) or A, not '" + args.steps + "'");
    }
    request.steps = std::make_pair(static_cast<int64_t>(*a), static_cast<int64_t>(*b));
  }
  request.max_kernels = args.max_kernels;
  return request;
}

// Writes the timeline; returns its summary.
Result<std::string> WriteTimeline(const std::string& trace, TimelineFormat format, bool gzipped,
                                  const StackDisplayOptions& display,
                                  const TimelineWindowRequest& window, std::ostream& sink) {
  GP_ASSIGN_OR_RETURN(const uint64_t large_bytes, LargeTimelineBytes());
  std::unique_ptr<GzipStream> gzip;
  if (gzipped) {
    GP_ASSIGN_OR_RETURN(gzip, GzipStream::Create(sink));
  }
  std::ostream& out = gzip ? static_cast<std::ostream&>(*gzip) : sink;
  TimelineStats stats;
  ReadReport report;
  TimelineOptions options;
  options.display = display;
  options.window = window;
  // Before anything is written: a timeline too large to open says so, and how to draw
  // part of it.
  options.on_counted = [&](const TimelineEventCounts& drawn) {
    const uint64_t bytes = EstimateTimelineBytes(format, gzipped, drawn);
    if (bytes < large_bytes) return;
    std::fprintf(stderr,
                 "gpuperf: note: this timeline will take about %s (%s kernels), more than a "
                 "browser tab holds well: draw part of it with --from/--to TIME, --steps A:B "
                 "or --max-kernels N\n",
                 FormatBytes(bytes).c_str(), FormatCount(drawn.kernels).c_str());
  };
  Status status =
      DrawTimelineFile(trace, options, *MakeTimelineWriter(format, out), &stats, &report);
  PrintReadWarnings(report);
  if (status.ok() && !stats.window.empty()) {
    std::fprintf(stderr, "gpuperf: window %s\n", stats.window.c_str());
  }
  if (gzip) {
    Status closed = gzip->Close();
    if (status.ok()) status = closed;
  }
  GP_RETURN_IF_ERROR(status);
  return FormatCount(stats.slices) + " slices, " + FormatCount(stats.flows) + " flow arrows, " +
         std::to_string(stats.tracks) + " tracks";
}

// Writes the dataset of Parquet tables into the directory `output`.
Status WriteParquet(const std::string& trace, const std::string& output,
                    const StackDisplayOptions& display, FILE* summary_to) {
  GP_ASSIGN_OR_RETURN(std::unique_ptr<parquet::DatasetWriter> writer,
                      parquet::DatasetWriter::Create(output));
  ReadReport report;
  DatasetOptions options;
  options.display = display;
  Result<DatasetSummary> summary = BuildDataset(trace, *writer, options, &report);
  PrintReadWarnings(report);
  GP_RETURN_IF_ERROR(summary.status());
  for (const std::string& warning : summary->warnings) {
    std::fprintf(stderr, "gpuperf: warning: %s\n", warning.c_str());
  }
  GP_RETURN_IF_ERROR(writer->Finish(*summary, trace));
  uint64_t rows = 0;
  for (uint64_t n : summary->rows) rows += n;
  std::fprintf(summary_to,
               "wrote %s (Parquet dataset): %s, %s rows in %s tables of %zu trace file%s\n",
               output.c_str(), FormatBytes(writer->bytes_written()).c_str(),
               FormatCount(rows).c_str(), std::to_string(kDatasetTableCount).c_str(),
               summary->parts.size(), summary->parts.size() == 1 ? "" : "s");
  return Status::Ok();
}

// `summary_to`: where the line saying what was written goes (stdout, unless the output is).
Status Run(const std::string& trace, const std::string& format_name, std::string output,
           const StackDisplayOptions& display, const WindowArgs& window_args,
           FILE* summary_to = stdout) {
  GP_ASSIGN_OR_RETURN(const ExportFormat format, ChooseFormat(format_name, output));
  if (format == ExportFormat::kParquet) {
    if (window_args.any()) {
      return Error(StatusCode::kInvalidArgument,
                   "--from, --to, --steps and --max-kernels draw part of a timeline; a Parquet "
                   "dataset holds every record");
    }
    if (output == "-") {
      return Error(StatusCode::kInvalidArgument,
                   "a Parquet dataset is a directory of files: give one with -o DIR");
    }
    return WriteParquet(trace, output.empty() ? DefaultOutput(trace, format) : output, display,
                        summary_to);
  }
  if (format == ExportFormat::kPprof && window_args.any()) {
    return Error(StatusCode::kInvalidArgument,
                 "--from, --to, --steps and --max-kernels draw part of a timeline; a pprof "
                 "profile sums the whole trace");
  }
  GP_ASSIGN_OR_RETURN(const TimelineWindowRequest window, ParseWindow(window_args));
  if (output.empty()) output = DefaultOutput(trace, format);
  const bool named_format = !format_name.empty() || FormatFromName(output).has_value();
  const bool to_stdout = output == "-";
  if (to_stdout && isatty(STDOUT_FILENO)) {
    return Error(StatusCode::kInvalidArgument,
                 format == ExportFormat::kPprof
                     ? "not writing a binary profile to a terminal: use -o profile.pb.gz"
                     : "not writing a binary timeline to a terminal: use -o trace.perfetto-trace");
  }

  GP_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, OutputFile::Open(output, trace));
  Result<std::string> summary =
      format == ExportFormat::kPprof
          ? WritePprof(trace, display, file->stream())
          : WriteTimeline(trace,
                          format == ExportFormat::kPerfetto ? TimelineFormat::kPerfetto
                                                            : TimelineFormat::kChromeJson,
                          EndsWith(output, ".gz"), display, window, file->stream());
  GP_RETURN_IF_ERROR(file->Finish(summary.status()));
  // A name that does not show the format gets it spelled out.
  const std::string what =
      named_format ? file->name() : file->name() + " (" + FormatName(format) + ")";
  std::fprintf(to_stdout ? stderr : summary_to, "wrote %s: %s, %s\n", what.c_str(),
               FormatBytes(file->bytes_written()).c_str(), summary->c_str());
  return Status::Ok();
}

}  // namespace

OutputKind KindOfOutput(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".svg" || extension == ".folded" || extension == ".collapsed") {
    return OutputKind::kFlamegraph;
  }
  // A plain .json is the report's JSON; gzipped, a Chrome timeline.
  if (FormatFromName(path) && (extension != ".json")) return OutputKind::kExport;
  return OutputKind::kReport;
}

int WriteExportOutput(const std::string& trace, const std::string& output,
                      const StackDisplayOptions& display) {
  const Status status = Run(trace, "", output, display, WindowArgs{}, stderr);
  return status.ok() ? kExitOk : ReportError(ExplainNotATrace(status, trace));
}

namespace {

void RegisterExport(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "export",
      "Write a timeline: Perfetto protobuf (default; open in ui.perfetto.dev) or Chrome JSON "
      "(chrome://tracing, .json or .json.gz); or a pprof profile of GPU time per launch stack "
      "(.pb.gz; go tool pprof, Pyroscope, Parca); or a dataset of Parquet tables for SQL engines "
      "(--format parquet -o DIR; docs/parquet.md)");
  auto trace = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto display = std::make_shared<StackDisplayOptions>();
  auto window = std::make_shared<WindowArgs>();
  cmd->add_option("trace", *trace, "Trace file (.gpt) or directory of trace files")->required();
  cmd->add_option(
      "--format,-f", *format,
      "perfetto, chrome, pprof or parquet (default: from the output name, else perfetto)");
  cmd->add_option("-o,--output", *output,
                  "Output file: .perfetto-trace, .pftrace, .pb, .json, .json.gz, .pb.gz or "
                  ".pprof, or a directory for parquet; - for stdout (default: next to the trace, "
                  ".perfetto-trace, .json.gz, .pb.gz or .parquet)");
  cmd->add_flag("--python-internals", display->python_internals,
                "Keep the Python interpreter's own frames in launch stacks with Python frames");
  cmd->add_flag("--native-detail", display->native_detail, kNativeDetailHelp);
  // Times need a unit: "5" could be seconds or nanoseconds.
  const DurationSpec time_since_start;
  CLI::Option* from = TakesDuration(
      cmd->add_option("--from", window->from_ns,
                      "Timeline: only events that start at or after this time since the "
                      "trace's start (e.g. 2.5s, 300ms)"),
      1, time_since_start);
  CLI::Option* to = TakesDuration(
      cmd->add_option("--to", window->to_ns,
                      "Timeline: only events that start before this time since the trace's "
                      "start"),
      1, time_since_start);
  cmd->add_option("--steps", window->steps,
                  "Timeline: only steps A to B (A:B, both drawn; or A) as the program marked "
                  "them: NVTX ranges named like steps (ProfilerStep#N, step N, train_step), "
                  "numbered by their name or else 1, 2, ... per thread");
  TakesCount(cmd->add_option("--max-kernels", window->max_kernels,
                             "Timeline: at most the first N kernels, and what starts before "
                             "the next"),
             CountSpec{1, UINT64_MAX});
  cmd->callback([=] {
    window->has_from = from->count() > 0;
    window->has_to = to->count() > 0;
    Status status = Run(*trace, *format, *output, *display, *window);
    *exit_code = status.ok() ? kExitOk : ReportError(ExplainNotATrace(status, *trace));
  });
}

}  // namespace

GPUPERF_COMMAND(40, RegisterExport);

}  // namespace gpuperf::cli
