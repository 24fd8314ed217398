// NCCL's profiler plugin, served by libgpuperf_inject.so itself: the library exports the
// tables ncclProfiler_v5 and ncclProfiler_v4, and `gpuperf record` points NCCL_PROFILER_PLUGIN
// at the library's own path, so NCCL's dlopen returns the copy libcuda already loaded and the
// plugin shares the recorder (docs/multi-rank.md, "NCCL's profiler plugin").
//
// It asks NCCL for one event type, the collective (ncclProfileColl), and keeps per
// collective its communicator, sequence number, operation, size, algorithm and protocol
// (NcclCollectiveRecord). The app thread's part is a slot claim and a few copies
// (nccl_events.h); the writer thread drains the slots each period.
#pragma once

#include "inject/recorder.h"

namespace gpuperf::inject {

// Hands the collectives stopped since the last call (and communicators not yet written) to
// the writer; `final` counts those still running as unfinished. Writer or exit path only.
void DrainNcclEvents(Recorder& recorder, bool final);

}  // namespace gpuperf::inject
