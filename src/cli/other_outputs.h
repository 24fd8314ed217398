// The outputs of other commands that `gpuperf report` writes beside its report, from the
// same read of the trace (report RUN -o report.txt -o flame.svg -o timeline.perfetto-trace):
// each written as its own command writes it with that command's default options, and the
// report's own stack display (--python-internals, --native-detail).
#pragma once

#include <string>

#include "analyze/symbols/symbol_table.h"

namespace gpuperf::cli {

enum class OutputKind {
  kReport,      // anything else: .txt, .json, .csv, no extension
  kFlamegraph,  // .svg, .folded, .collapsed
  kExport,      // .perfetto-trace, .pftrace, .pb, .json.gz (timelines), .pb.gz, .pprof
};

OutputKind KindOfOutput(const std::string& path);

// `gpuperf flamegraph TRACE -o OUTPUT`; returns its exit code (cmd_flamegraph.cc).
int WriteFlamegraphOutput(const std::string& trace, const std::string& output,
                          const StackDisplayOptions& display);

// `gpuperf export TRACE -o OUTPUT`, its summary line on stderr; returns its exit code
// (cmd_export.cc).
int WriteExportOutput(const std::string& trace, const std::string& output,
                      const StackDisplayOptions& display);

}  // namespace gpuperf::cli
