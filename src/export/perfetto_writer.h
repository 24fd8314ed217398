// TimelineWriter for Perfetto's protobuf trace format, hand-encoded, in Perfetto's own
// compact form:
//
// - one packet sequence per track, so every sequence's timestamps only move forward:
//   each sequence has an incremental clock (a sequence-scoped clock with
//   is_incremental, declared by a clock snapshot against CLOCK_MONOTONIC) and its
//   packets carry the delta from the packet before; the packet defaults name the clock
//   and the track, so events carry neither;
// - every text and call stack is interned per sequence (InternedData): sent once, in the
//   packet that first uses it, and referred to by iid afterwards;
// - GPU work is Perfetto's native GPU compute: GpuRenderStageEvent slices with the
//   kernel (InternedComputeKernel), its launch shape and gpu_id, so trace processor's
//   gpu_slice table, its GPU analyses and the UI's per-process GPU tracks see them;
//   arrows from launch calls use GpuTrackEvent.gpu_correlation; GPU counters are
//   GpuCounterEvents;
// - CPU calls, NVTX ranges and notes are TrackEvents with interned call stacks;
// - packets go out in zstd-compressed bundles (TracePacket.zstd_compressed_packets).
#pragma once

#include <memory>
#include <ostream>

#include "analyze/timeline/timeline_events.h"

namespace gpuperf {

struct PerfettoOptions {
  // Bundles of zstd-compressed packets; false writes the packets themselves (readable
  // by Perfetto versions before zstd support, and by protoc).
  bool compress = true;
};

std::unique_ptr<TimelineWriter> MakePerfettoWriter(std::ostream& out,
                                                   const PerfettoOptions& options = {});

}  // namespace gpuperf
