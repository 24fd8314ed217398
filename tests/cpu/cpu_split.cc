// A program with a known split of its time, for `gpuperf record --cpu --off-cpu` tests:
//
//   cpu_split [CPU_MS=2000] [SLEEP_MS=500] [SYNC_MS=300]
//
// spends CPU_MS of CPU time, 70% in cpu_split_hot and 30% in cpu_split_warm (alternating
// blocks of 7 and 3 ms, measured in thread CPU time, so other load on the machine does not
// move the split), then sleeps SLEEP_MS in cpu_split_sleep, then blocks SYNC_MS inside a
// stand-in for cudaStreamSynchronize (a CUDA call that waits for the GPU, named so that
// the profiler's stack test finds it). It prints what it did, in ns:
//   cpu_split: pid=.. hot_ns=.. warm_ns=.. sleep_ns=.. sync_ns=..
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

void SleepNs(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

volatile uint64_t g_sink;

}  // namespace

// Spins until this thread has used `ns` more CPU time; returns what it used.
extern "C" __attribute__((noinline)) uint64_t cpu_split_spin(uint64_t ns) {
  const uint64_t start = ThreadCpuNs();
  uint64_t x = start;
  // Few clock reads (a system call each): the time goes to this function, not the clock.
  while (ThreadCpuNs() - start < ns) {
    for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  }
  g_sink = x;
  return ThreadCpuNs() - start;
}

// Not tail calls: each keeps its frame while cpu_split_spin runs.
extern "C" __attribute__((noinline)) uint64_t cpu_split_hot(uint64_t ns) {
  const uint64_t used = cpu_split_spin(ns);
  g_sink = g_sink + 1;
  return used;
}

extern "C" __attribute__((noinline)) uint64_t cpu_split_warm(uint64_t ns) {
  const uint64_t used = cpu_split_spin(ns);
  g_sink = g_sink + 2;
  return used;
}

extern "C" __attribute__((noinline)) uint64_t cpu_split_sleep(uint64_t ns) {
  const uint64_t start = MonotonicNs();
  SleepNs(ns);
  return MonotonicNs() - start;
}

// Not CUDA: a stand-in with the name of a call that waits for the GPU.
extern "C" __attribute__((noinline)) int cudaStreamSynchronize(void* stream) {
  SleepNs(reinterpret_cast<uintptr_t>(stream) * 1000000ull);
  return 0;
}

extern "C" __attribute__((noinline)) uint64_t cpu_split_gpu_wait(uint64_t ms) {
  const uint64_t start = MonotonicNs();
  cudaStreamSynchronize(reinterpret_cast<void*>(static_cast<uintptr_t>(ms)));
  return MonotonicNs() - start;
}

int main(int argc, char** argv) {
  const uint64_t cpu_ms = argc > 1 ? strtoull(argv[1], nullptr, 10) : 2000;
  const uint64_t sleep_ms = argc > 2 ? strtoull(argv[2], nullptr, 10) : 500;
  const uint64_t sync_ms = argc > 3 ? strtoull(argv[3], nullptr, 10) : 300;
  uint64_t hot = 0, warm = 0;
  for (uint64_t done = 0; done < cpu_ms; done += 10) {
    hot += cpu_split_hot(7000000);
    warm += cpu_split_warm(3000000);
  }
  const uint64_t slept = cpu_split_sleep(sleep_ms * 1000000ull);
  const uint64_t synced = sync_ms ? cpu_split_gpu_wait(sync_ms) : 0;
  std::printf("cpu_split: pid=%d hot_ns=%llu warm_ns=%llu sleep_ns=%llu sync_ns=%llu\n", getpid(),
              (unsigned long long)hot, (unsigned long long)warm, (unsigned long long)slept,
              (unsigned long long)synced);
  return 0;
}
