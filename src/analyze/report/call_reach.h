// The API calls of one thread that overlap a window of time, for the sections and rules
// that say what the CPU did while the GPU idled (utilization's idle gaps, the idle-gap
// insight).
//
// A thread's calls are sorted by start; calls of one thread nest (a driver call inside a
// runtime call) but a long call can reach far past the ones after it. So the walk starts
// at the last call that starts before the window's end and goes back while some call up
// to there still ends inside the window: the latest end of calls [0..i]. That is kept per
// block of 64 calls (an eighth of a byte a call, not eight: a long run has tens of
// millions), and a block's own running maxima are made when a walk enters it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {

class CallReach {
 public:
  explicit CallReach(const std::deque<ApiCall>& calls) : calls_(&calls) {
    block_max_.assign((calls.size() + kBlock - 1) / kBlock, 0);
    uint64_t m = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      m = std::max(m, calls[i].end);
      block_max_[i / kBlock] = m;
    }
  }

  // Calls visit(i) for every call i that overlaps [begin, end), latest start first.
  template <class Visit>
  void ForEachOverlapping(uint64_t begin, uint64_t end, Visit visit) {
    const std::deque<ApiCall>& calls = *calls_;
    size_t i = std::lower_bound(calls.begin(), calls.end(), end,
                                [](const ApiCall& c, uint64_t v) { return c.start < v; }) -
               calls.begin();
    while (i > 0 && MaxEndUpTo(i - 1) > begin) {
      --i;
      if (calls[i].end > begin) visit(i);
    }
  }

 private:
  static constexpr size_t kBlock = 64;

  uint64_t MaxEndUpTo(size_t i) {
    const size_t block = i / kBlock;
    if (block != cached_block_) {
      cached_block_ = block;
      const std::deque<ApiCall>& calls = *calls_;
      uint64_t m = block > 0 ? block_max_[block - 1] : 0;
      const size_t last = std::min(calls.size(), (block + 1) * kBlock);
      for (size_t j = block * kBlock; j < last; ++j) {
        m = std::max(m, calls[j].end);
        in_block_[j - block * kBlock] = m;
      }
    }
    return in_block_[i - block * kBlock];
  }

  const std::deque<ApiCall>* calls_;
  std::vector<uint64_t> block_max_;  // [b]: the latest end of the calls of blocks 0..b
  size_t cached_block_ = SIZE_MAX;
  uint64_t in_block_[kBlock] = {};
};

}  // namespace gpuperf::report
