// Whether a thread's launches should still try the frame-pointer walk (stack_capture.cc).
//
// The walk is exact only for stacks libunwind once confirmed, and in PyTorch none pass:
// libtorch keeps no frame pointers, so every launch walked them, interned the result and
// looked up its verdict (the refusal) before it walked the .eh_frame tables anyway. On the
// H100, in a GPT-2 decode, that was ~8% of the capture's time. So each thread keeps score:
// after 1,024 launches of which fewer than 1 in 10 were frame-pointer stacks, it stops
// trying for 65,536 launches, then gives the walk another 1,024. A thread whose stacks
// pass (a C++ program built with frame pointers) keeps the walk. Nothing is lost by
// skipping: the tables and libunwind unwind every stack exactly.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

class FramePointerOdds {
 public:
  static constexpr uint32_t kJudgeAfter = 1024;   // launches tried before a verdict
  static constexpr uint32_t kSkipFor = 1u << 16;  // launches skipped before trying again
  static constexpr uint32_t kMinHitsPer10 = 1;    // keep trying at >= 1 hit in 10

  // Whether this launch should try the frame-pointer walk.
  bool ShouldTry() {
    if (skipped_ == 0) return true;
    if (--skipped_ == 0) tried_ = hits_ = 0;  // try again from now on
    return skipped_ == 0;
  }

  // The outcome of a launch that tried: `hit` when its frame-pointer stack was used. True
  // when this launch made the thread stop trying (counted by the caller).
  bool Note(bool hit) {
    ++tried_;
    hits_ += hit ? 1 : 0;
    if (tried_ < kJudgeAfter) return false;
    const bool give_up = hits_ * 10 < tried_ * kMinHitsPer10;
    tried_ = hits_ = 0;
    if (give_up) skipped_ = kSkipFor;
    return give_up;
  }

 private:
  uint32_t tried_ = 0, hits_ = 0;
  uint32_t skipped_ = 0;  // launches left to skip; 0: trying
};

}  // namespace gpuperf::inject
