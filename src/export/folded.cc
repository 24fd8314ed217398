#include "export/folded.h"

#include <string>

#include "base/text_escape.h"

namespace gpuperf {

Status ExportFolded(const FlameGraph& graph, FlameWeight weight, std::ostream& out) {
  std::string line;
  for (const FlameStack& stack : graph.stacks) {
    const uint64_t value = stack.weight(weight);
    if (value == 0) continue;
    line.clear();
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      if (i > 0) line += ';';
      // Names are one line already (flame::Sanitize); the display form keeps it so for any
      // other producer of a flame graph.
      AppendEscaped(line, graph.frames[stack.frames[i]].name, TextForm::kDisplay);
    }
    line += ' ';
    line += std::to_string(value);
    line += '\n';
    out << line;
  }
  out.flush();
  if (!out) return Error(StatusCode::kIoError, "could not write the folded stacks");
  return Status::Ok();
}

Status ExportFolded(const Trace& trace, const FlameGraphOptions& options, std::ostream& out) {
  GP_ASSIGN_OR_RETURN(FlameGraph graph, BuildFlameGraph(trace, options));
  return ExportFolded(graph, options.weight, out);
}

}  // namespace gpuperf
