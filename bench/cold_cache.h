// Cold-cache timing for the launch-path benchmarks (table_unwinder_bench, python_walk_bench).
//
// In a real process the application runs between two launches (the Python interpreter,
// PyTorch's dispatcher) and evicts what the previous launch callback left in the CPU
// caches. A benchmark loop that walks the same stack back to back keeps everything in L1
// and measures a best case. These helpers evict before each walk, outside the timed region,
// and time one walk at a time:
//   SweepEvictor: reads one word per 64-byte line of a buffer larger than the caches to
//     evict (8 MiB leaves most of the data in a large L3; 64 MiB is past most L3s);
//   FlushLines: clflush of one address range (e.g. the stack only, the rest stays warm);
//   OneShotTimer: a monotonic clock around one call, less the clock's own cost (the median
//     of empty intervals), and the median over the benchmark's iterations.
#pragma once

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpuperf::bench {

class SweepEvictor {
 public:
  explicit SweepEvictor(size_t bytes) : size_(bytes), buffer_(new uint8_t[bytes]) {
    std::fill(buffer_.get(), buffer_.get() + size_, uint8_t{1});  // backed, not the zero page
  }
  void Evict() {
    uint64_t sum = 0;
    for (size_t i = 0; i < size_; i += 64) sum += buffer_[i];
    benchmark::DoNotOptimize(sum);
  }

 private:
  size_t size_;
  std::unique_ptr<uint8_t[]> buffer_;
};

inline void FlushLines(uintptr_t begin, uintptr_t end) {
  for (uintptr_t line = begin & ~uintptr_t{63}; line < end; line += 64) {
    _mm_clflush(reinterpret_cast<const void*>(line));
  }
  _mm_mfence();
}

// Reads every line of [begin, end) (brings it back after a sweep).
inline void TouchLines(uintptr_t begin, uintptr_t end) {
  uint64_t sum = 0;
  for (uintptr_t line = begin & ~uintptr_t{63}; line < end; line += 64) {
    sum += *reinterpret_cast<const volatile uint8_t*>(line);
  }
  benchmark::DoNotOptimize(sum);
}

class OneShotTimer {
 public:
  using Clock = std::chrono::steady_clock;
  OneShotTimer() {
    std::vector<double> empty;
    for (int i = 0; i < 201; ++i) {
      const Clock::time_point a = Clock::now();
      const Clock::time_point b = Clock::now();
      empty.push_back(std::chrono::duration<double, std::nano>(b - a).count());
    }
    std::nth_element(empty.begin(), empty.begin() + 100, empty.end());
    overhead_ns_ = empty[100];
  }
  void Start() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    start_ = Clock::now();
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  // Ends the interval: records it (less the clock's cost) and gives it to `state` as the
  // iteration's manual time.
  void Stop(benchmark::State& state) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const Clock::time_point end = Clock::now();
    double ns = std::chrono::duration<double, std::nano>(end - start_).count() - overhead_ns_;
    if (ns < 0) ns = 0;
    samples_.push_back(ns);
    state.SetIterationTime(ns * 1e-9);
  }
  double MedianNs() {
    if (samples_.empty()) return 0;
    std::nth_element(samples_.begin(), samples_.begin() + samples_.size() / 2, samples_.end());
    return samples_[samples_.size() / 2];
  }
  double overhead_ns() const { return overhead_ns_; }

 private:
  double overhead_ns_ = 0;
  Clock::time_point start_;
  std::vector<double> samples_;
};

}  // namespace gpuperf::bench
