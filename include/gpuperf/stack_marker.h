// Recorded stacks that stand for something other than frames.
//
// A stack word is a native PC (below 2^47 on x86-64 and aarch64) or a Python frame word
// (bit 63 set, python_frame_word.h). Words whose top four bits are 0001 are neither: they
// mark a stack that has no frames to show, for a reason the analysis names.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuperf {

constexpr bool IsStackMarkerWord(uint64_t word) {
  return (word >> 60) == 1;
}

// The one-word stack of every launch whose stack `record --sample-launches` did not take:
// its GPU work is recorded, joined to this stack, and shown under this label.
inline constexpr uint64_t kLaunchNotSampledWord = (1ull << 60) | 1;
inline constexpr std::string_view kLaunchNotSampledLabel = "[launch not sampled]";

// Inside a stack (not a stack of its own): the Python frames after this word are not the
// launching thread's but those of the forward op whose autograd backward made the launch
// (inject/torch/autograd_link.h). The analysis shows them outermost, then
// kAutogradBackwardLabel, then the launch's own frames.
inline constexpr uint64_t kAutogradForwardWord = (1ull << 60) | 2;

}  // namespace gpuperf
