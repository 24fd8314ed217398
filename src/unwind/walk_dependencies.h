// What a table walk's result depends on, learnt from the walk itself (table_walk.h's
// observer): every return address and CFA slot it read, and a saved RBP only once a later
// frame computes something from it. Code without frame pointers keeps other values in RBP,
// saved and restored around calls; those change from call to call and change no stack.
// So a walk from the same registers (RBP only if `start_rbp_used`) over a stack whose
// needed words hold the same values takes the same steps and gives the same PCs, whatever
// the other words hold: the launch-stack memo (stack_memo.h) rests on that, and
// table_unwinder_test checks it on random stacks.
//
// Header-only, like table_walk.h.
#pragma once

#include <cstdint>

namespace gpuperf {

template <int kMaxReads>
struct WalkDependencies {
  struct Read {
    uint64_t address, value;
    bool needed;
  };
  Read reads[kMaxReads];
  int count = 0;
  int rbp_from = -1;  // the read that gave the current RBP; -1: the starting registers'
  bool start_rbp_used = false;
  bool overflow = false;  // more than kMaxReads reads: the list is incomplete

  void Loaded(uint64_t address, uint64_t value, bool rbp) {
    if (count == kMaxReads) {
      overflow = true;
      return;
    }
    reads[count] = {address, value, !rbp};
    if (rbp) rbp_from = count;
    ++count;
  }
  void UsedRbp() {
    if (rbp_from < 0) {
      start_rbp_used = true;
    } else {
      reads[rbp_from].needed = true;
    }
  }
};

}  // namespace gpuperf
