// The flame graph SVG's colours (export/flamegraph_svg.h): one palette per kind of frame,
// the colour within it from a hash of the name, so the same function keeps its colour
// across runs; the three kinds of time (on-CPU, off-CPU, GPU) stand apart.
#pragma once

#include <string>

#include "analyze/flame/flamegraph.h"

namespace gpuperf {

// "#rrggbb" for a frame.
std::string FrameColour(const FlameFrame& frame);

// The one-letter CSS class of a kind of frame, which the script reads back
// (flamegraph_svg_script.h).
char KindClass(FlameFrameKind kind);

}  // namespace gpuperf
