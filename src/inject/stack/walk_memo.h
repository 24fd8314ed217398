// The previous table walk of one thread, kept so that the next walk can take over its
// outer frames instead of looking up their rules again.
//
// Launch stacks repeat: consecutive launches of a PyTorch loop share the frames from the
// Python binding out to main, and only the op's own frames differ. In a real process the
// rule lookups of those shared frames miss the CPU caches (the program's own work between
// two launches evicts the rule cache), which made the native walk cost about 30 ns a frame
// on the H100 machine's decode loop against 5 ns in a benchmark.
//
// Why taking over is exact: from a frame on, a walk is a function of that frame's three
// registers, of the words it reads from the stack (return addresses, saved RBPs, realigned
// CFAs), of the rules (one snapshot) and of the stack's bounds (one thread). A new walk
// that reaches a frame with the same registers as a frame of the memo, on the same
// snapshot and with the same depth limit, re-reads every word the memo read from there
// on; when all of them still hold the same values, the rest of the walk is the memo's,
// frame for frame. One changed word and the walk goes on by the rules as before.
#pragma once

#include <cstdint>

#include "inject/stack/unwind_table.h"

namespace gpuperf {

struct WalkMemo {
  static constexpr int kMaxFrames = 256;
  static constexpr int kMaxReads = 3;  // words one frame's unwinding reads (CFA slot, RBP, RA)

  struct Read {
    uint64_t address = 0, value = 0;
  };
  struct Frame {
    uint64_t rip = 0, rsp = 0, rbp = 0;  // the frame's registers (rip: its PC in the walk)
    Read reads[kMaxReads];
    int read_count = 0;  // what unwinding this frame to its caller read
  };

  const UnwindSnapshot* snapshot = nullptr;
  int max_depth = 0;
  int depth = 0;  // frames recorded; 0: no memo
  uint8_t stop = 0;  // TableWalkStop of the recorded walk
  uint64_t at_stop[3] = {};
  Frame frames[kMaxFrames];
};

}  // namespace gpuperf
