// gpuperf's own interactive flame graph: one self-contained SVG (inline CSS and script)
// that opens in any browser. Widths are GPU time (or activity counts); CPU frames, launch
// APIs, graphs, kernels and copies/sets have palettes of their own, coloured from a hash
// of the name so the same function keeps its colour across runs. Hover for details,
// click to zoom, search with a regex; see flamegraph_svg_script.h for the controls and
// the URL fragment (#zoom=NAME&search=REGEX).
#pragma once

#include <ostream>
#include <string>

#include "analyze/flame/flamegraph.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

// How the SVG is drawn; what it shows comes from FlameGraphOptions.
struct FlameGraphSvgOptions {
  std::string title;                   // empty: one that says what the widths are
  double min_width_fraction = 0.0005;  // frames narrower than this share are not drawn
  std::string data_loss;  // DataLossSummary::line; drawn in red under the title when set
};

// Draws `graph`, built with `options` (the subtitle names its weight and filters). Frames
// narrower than svg.min_width_fraction of the total are not drawn (their time still
// counts in their parents and in the totals); the subtitle says how many.
Status ExportFlamegraphSvg(const FlameGraph& graph, const FlameGraphOptions& options,
                           const FlameGraphSvgOptions& svg, std::ostream& out);

// Builds the flame graph of `trace` and draws it.
Status ExportFlamegraphSvg(const Trace& trace, const FlameGraphOptions& options,
                           const FlameGraphSvgOptions& svg, std::ostream& out);

}  // namespace gpuperf
