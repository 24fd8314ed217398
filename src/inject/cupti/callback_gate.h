// Which of our CUPTI callbacks are running now, so that CUPTI is finalized only once none is
// (detach.h). A callback still running when cuptiFinalize tears CUPTI down would go on inside
// CUPTI calls of its own (a synchronization's exit callback asks CUPTI for the stream's id)
// on what is being freed: in a program whose threads synchronize all the time (a PyTorch
// loop), the end of a window would be a race with every step.
//
// Every callback enters the gate (EnteredCallback) before it does anything; once the gate is
// closed an API or resource callback does nothing (an activity buffer's delivery still frees
// its buffer, counted as running all the same). Counts are kept in stripes, one cache line each, so
// that threads launching at full rate do not share one counter.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

class EnteredCallback {
 public:
  EnteredCallback();
  ~EnteredCallback();
  EnteredCallback(const EnteredCallback&) = delete;
  EnteredCallback& operator=(const EnteredCallback&) = delete;
  // False once the gate is closed: the callback must return at once.
  bool open() const { return open_; }

 private:
  uint32_t stripe_;
  bool open_;
};

// Closes the gate and waits, up to `timeout_ms`, until no callback of ours runs on another
// thread (one that calls this from inside a callback does not wait for itself). False when
// one still runs then.
bool CloseCallbackGate(uint64_t timeout_ms);
// Opens it again: a later subscription (the next attach window, the benchmark toggle).
void OpenCallbackGate();

}  // namespace gpuperf::inject
