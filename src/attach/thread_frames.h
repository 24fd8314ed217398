// The callers of a thread gpuperf attach has stopped, unwound with libdw from its modules'
// call frame information (.eh_frame), so that the safe-point check (safe_point.h) looks at the
// frames the thread is really in, not at the stale return addresses every stack keeps in the
// slots of shallower calls (a thread that launched CUDA work and now sleeps still has
// addresses into libcuda there).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace gpuperf::attach {

struct ThreadFrames {
  // Innermost first: the pc, then each frame's return address.
  std::vector<uint64_t> pcs;
  // The walk reached the outermost frame (_start, a thread's start). When it did not (code
  // without unwind information, a damaged frame), `stopped_sp` is the stack pointer of the
  // last frame it knows: the stack above it is to be judged word by word.
  bool complete = false;
  uint64_t stopped_sp = 0;
};

class FrameWalker {
 public:
  // The modules of process `pid` as mapped now (its /proc/PID/maps).
  explicit FrameWalker(pid_t pid);
  ~FrameWalker();
  FrameWalker(const FrameWalker&) = delete;
  FrameWalker& operator=(const FrameWalker&) = delete;

  // The frames of the thread stopped with `regs` (its memory read with process_vm_readv).
  // Empty and incomplete when libdw cannot start (then stopped_sp is the thread's sp).
  ThreadFrames Walk(pid_t tid, const user_regs_struct& regs);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace gpuperf::attach
