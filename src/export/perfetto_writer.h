// TimelineWriter for Perfetto's protobuf trace format (TrackEvent), hand-encoded.
//
// One trusted packet sequence: the first packet clears incremental state and sets the
// packet defaults (timestamps in CLOCK_MONOTONIC ns); a clock snapshot makes MONOTONIC
// the trace's primary clock. Event names, categories, argument names and repeated
// argument values (launch shapes, stacks) are interned: each text is written once, in
// the packet that first uses it, and referred to by iid afterwards.
#pragma once

#include <memory>
#include <ostream>

#include "analyze/timeline_events.h"

namespace gpuperf {

std::unique_ptr<TimelineWriter> MakePerfettoWriter(std::ostream& out);

}  // namespace gpuperf
