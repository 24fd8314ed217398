// PyTorch's autograd: a backward kernel's launch stack inherits the Python frames of the
// forward op it differentiates (docs/recording.md "Backward kernels").
//
// Backward runs on the autograd engine's threads (pt_autograd_N), which have no Python
// frames: their launch stacks show only the engine's and the op's native frames. PyTorch
// links the two passes by the autograd node: each op that records for autograd creates a
// node with the thread's next sequence number (at::sequence_number) and the forward
// thread's profiler id (at::RecordFunction::currentThreadId), and the engine runs that
// node's backward under a thread-local "current node" (torch::autograd::get_current_node).
// Kineto joins its forward and backward ops by the same pair.
//
// So at each linked launch, on a thread:
// - inside a backward node (the current node is set): the launch is that node's backward.
//   Its stack gets, after its own frames, kAutogradForwardWord and the Python frames of
//   the forward op's launch stack (stack_capture.h CaptureLaunchStack's `inherit_from`).
// - otherwise, if the thread's sequence number moved since its last launch, a node was
//   created since: the op that created the newest one is running (PyTorch creates an op's
//   node before it dispatches the op's kernels), and this is its first launch. Its stack
//   is kept for that node's (thread, sequence number), in a table of 2^16 entries, until a
//   later node takes the entry.
// An op that launches nothing before the next node is created has no forward stack; its
// backward launches keep their own stacks (counted).
//
// Only PyTorch's exported entry points are called, from the launching thread itself; the
// node's two fields are read at the offsets PyTorch 2.x lays them out at (after the vtable
// and enable_shared_from_this: sequence_nr_ at 24, thread_id_ at 48), checked for sanity
// before use. Without libtorch in the process nothing here runs. GPUPERF_AUTOGRAD_LINK=off
// leaves it out.
#pragma once

#include <cstdint>

#include "gpuperf/records.h"

namespace gpuperf::inject {

// Looks for libtorch_cpu.so in the process (dlopen RTLD_NOLOAD: never loads it). Call at
// init and from the writer thread (it takes the loader's lock); true once found.
bool ProbeAutogradLink();
bool AutogradLinkReady();

// The benchmark hook's level 9 (bench_toggle.cc): launches are left unlinked while paused.
void PauseAutogradLinkForBench(bool paused);

// What autograd says about a launch on the calling thread.
struct AutogradLaunch {
  enum class Role : uint8_t { kNone, kForward, kBackward } role = Role::kNone;
  uint64_t node = 0;  // the node's key (AutogradNodeKey), for kForward and kBackward
};
AutogradLaunch CurrentAutogradLaunch();

// The node's key: the forward thread's profiler id and the node's sequence number.
constexpr uint64_t AutogradNodeKey(uint64_t forward_thread, uint64_t sequence_nr) {
  return forward_thread << 48 | (sequence_nr & ((uint64_t{1} << 48) - 1));
}

// A forward op's first launch: its stack, for the node's backward launches.
void NoteForwardStack(uint64_t node, StackId stack);
// The stack the forward op of `node` launched from, or 0 (never seen, or its entry taken by
// a later node).
StackId ForwardStackOf(uint64_t node);

}  // namespace gpuperf::inject
