// The opening edge of an attach window (docs/attach.md). A CUDA call that was running when
// the window switched the callbacks on never had its enter callback, so it has no launch
// stack; its GPU work may still reach CUPTI after the activity kinds came on. Such work is
// left out (and counted, calls_before_window): every kernel, copy and set of a window is
// joined to the call that launched it.
//
// The exit callback that finds no enter notes the call's correlation id here; the activity
// buffers drop records carrying one of them. At most one call per thread straddles the edge.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct RecordBatch;

// A new window opens: the ids noted for the last one are forgotten, and the exit callbacks
// note from now on (`on`; off outside attach windows).
void StartWindowEdge(bool on);
// From the exit callback of a call whose enter was not seen. Lock-free.
void NoteCallBeforeWindow(uint32_t correlation_id);
// Removes the kernels, copies, sets and allocations of noted calls from `batch`; returns how
// many. One load when nothing was noted.
uint64_t DropCallsBeforeWindow(RecordBatch& batch);

}  // namespace gpuperf::inject
