// A CPU-bound program whose hot path keeps no frame pointers, for the eBPF CPU profiler's
// .eh_frame unwinding (tests/e2e/cpu_unwind_test.sh): main calls into the unwinder tests'
// chain of three shared libraries built -O2 -fomit-frame-pointer (tests/unwind/chain.h),
// which reaches unwind_chain_spin (here, also without frame pointers) through libc's
// qsort_r: main -> Run (a) -> Descend (b) -> SortAndCallLeaf (a) -> qsort_r (libc) ->
// CompareInts (a) -> CallLeaf (c) -> unwind_chain_spin, which spins for argv[1] ms.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "unwind/chain.h"

namespace {

volatile unsigned long g_sink = 0;

}  // namespace

extern "C" __attribute__((noinline)) int unwind_chain_spin(void* arg) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(*static_cast<const long*>(arg));
  unsigned long x = 1;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
    g_sink = x;
  }
  return static_cast<int>(x & 1);
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? std::atol(argv[1]) : 1000;
  chain_nofp::ChainContext context;
  context.leaf = unwind_chain_spin;
  context.arg = &ms;
  const int result = chain_nofp::Run(0, &context);
  std::printf("unwind_chain_spin: spun %ld ms (%d)\n", ms, result);
  return context.leaf_called ? 0 : 1;
}
