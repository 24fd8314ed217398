// A context-switch-heavy program for the CPU profiler's overhead (bench/cpu_overhead/run.sh):
// PAIRS producer/consumer thread pairs hand ITEMS items each through a one-slot mailbox
// guarded by a mutex and condition variables, with WORK_NS of computation per item on
// each side, so every item costs two context switches where the threads share CPUs. On a
// machine with CPUs to spare the two sides overlap and rarely block; MODE `pingpong` then
// makes each side wait for the other's work (the producer waits for the consumer's answer
// before its next item), so each item blocks both threads once, on any machine. It prints
// the time of the hand-off loop alone, its CPU time, and the context switches it made:
//   switchy: seconds=1.234 cpu_seconds=2.345 items=... switches=... switches_per_s=...
//
// usage: switchy [PAIRS=2] [ITEMS=100000] [WORK_NS=5000] [MODE=pipeline|pingpong]
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace {

volatile uint64_t g_sink;

__attribute__((noinline)) void Work(uint64_t ns) {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  uint64_t x = ns;
  do {
    for (int i = 0; i < 64; ++i) x = x * 6364136223846793005ull + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while (uint64_t(now.tv_sec - start.tv_sec) * 1000000000ull + now.tv_nsec - start.tv_nsec < ns);
  g_sink = x;
}

struct Mailbox {
  std::mutex mutex;
  std::condition_variable filled, emptied, answered;
  bool full = false;
  bool answer = false;  // pingpong: the consumer finished the item's work
};

void Produce(Mailbox& box, long items, uint64_t work_ns, bool pingpong) {
  for (long i = 0; i < items; ++i) {
    Work(work_ns);
    std::unique_lock<std::mutex> lock(box.mutex);
    box.emptied.wait(lock, [&] { return !box.full; });
    box.full = true;
    box.filled.notify_one();
    if (pingpong) {
      box.answered.wait(lock, [&] { return box.answer; });
      box.answer = false;
    }
  }
}

void Consume(Mailbox& box, long items, uint64_t work_ns, bool pingpong) {
  for (long i = 0; i < items; ++i) {
    {
      std::unique_lock<std::mutex> lock(box.mutex);
      box.filled.wait(lock, [&] { return box.full; });
      box.full = false;
      box.emptied.notify_one();
    }
    Work(work_ns);
    if (pingpong) {
      std::lock_guard<std::mutex> lock(box.mutex);
      box.answer = true;
      box.answered.notify_one();
    }
  }
}

long Switches() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw + usage.ru_nivcsw;
}

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const int pairs = argc > 1 ? atoi(argv[1]) : 2;
  const long items = argc > 2 ? atol(argv[2]) : 100000;
  const uint64_t work_ns = argc > 3 ? strtoull(argv[3], nullptr, 10) : 5000;
  const bool pingpong = argc > 4 && std::string_view(argv[4]) == "pingpong";
  std::vector<Mailbox> boxes(pairs);
  std::vector<std::thread> threads;
  const long switches_before = Switches();
  const auto start = std::chrono::steady_clock::now();
  for (int p = 0; p < pairs; ++p) {
    threads.emplace_back(Produce, std::ref(boxes[p]), items, work_ns, pingpong);
    threads.emplace_back(Consume, std::ref(boxes[p]), items, work_ns, pingpong);
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long switches = Switches() - switches_before;
  std::printf("switchy: seconds=%.4f cpu_seconds=%.4f items=%ld switches=%ld switches_per_s=%.0f\n",
              seconds, CpuSeconds(), items * pairs, switches, switches / seconds);
  return 0;
}
