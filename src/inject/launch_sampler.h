// `record --sample-launches N/s`: a rate limit on launch stacks, kept per thread, so that
// a recording left on in production pays for at most N stack walks per second per thread.
// Every launch is still linked and its GPU work recorded; the launches not sampled are
// linked to the "[launch not sampled]" stack (gpuperf/stack_marker.h).
//
// The limit is a token bucket in its GCRA form: one timestamp per thread, no division on
// the launch path. A thread that has been quiet may take a burst of N/10 (at least one)
// stacks at once; after that one per 1/N s.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpuperf::inject {

class LaunchSampler {
 public:
  // The bucket of one thread: when its next stack is due.
  struct Bucket {
    uint64_t due_ns = 0;
  };

  // 0 turns sampling off: every launch gets its stack.
  void Configure(uint32_t per_second) {
    interval_ns_ = per_second ? 1'000'000'000ull / per_second : 0;
    if (per_second > 1'000'000'000u) interval_ns_ = 1;
    const uint64_t burst = std::max<uint64_t>(1, per_second / 10);
    tolerance_ns_ = (burst - 1) * interval_ns_;
  }
  bool enabled() const { return interval_ns_ != 0; }

  // Whether the launch at `now_ns` takes its stack.
  bool Take(Bucket& bucket, uint64_t now_ns) const {
    if (now_ns + tolerance_ns_ < bucket.due_ns) return false;
    bucket.due_ns = std::max(bucket.due_ns, now_ns) + interval_ns_;
    return true;
  }

 private:
  uint64_t interval_ns_ = 0;
  uint64_t tolerance_ns_ = 0;
};

}  // namespace gpuperf::inject
