// Nanoseconds per frame of each native unwinder on a stack through three shared libraries
// and libc's qsort_r (tests/unwind/chain.h), captured at the bottom of the chain:
//   Table:         the .eh_frame table unwinder (src/inject/stack/table_unwinder.h), its
//                  per-thread rule cache warm (a stack seen before, as most launches are);
//   TableUncached: the same with the cache off: two searches per frame (a new stack);
//   Libunwind:     unw_backtrace with its per-thread cache (what launches pay today);
//   Libgcc:        _Unwind_Backtrace;
//   FramePointers: the frame-pointer walk, which is only right where every frame keeps a
//                  frame record (see the depth counter: on the -fomit-frame-pointer chain
//                  it gets lost).
// Each runs on the chain built with -fomit-frame-pointer (/nofp) and with frame pointers
// (/fp). Counters: depth (frames captured) and ns_per_frame (time per capture / depth).
// The issue-12 budget for the table unwinder is 20 ns per frame (median).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "inject/stack/table_unwinder.h"
#include "inject/stack/unwinder.h"

#define GP_CHAIN_NS chain_nofp
#include "unwind/chain.h"
#undef GP_CHAIN_NS
#define GP_CHAIN_NS chain_fp
#include "unwind/chain.h"
#undef GP_CHAIN_NS

namespace gpuperf {
namespace {

constexpr int kChainLevels = 12;  // with the benchmark's own frames: ~35-40 frames

enum class Method { kTable, kTableUncached, kLibunwind, kLibgcc, kFramePointers };

struct BenchRun {
  benchmark::State* state;
  Method method;
};

__attribute__((noinline)) int CaptureOnce(Method method, uint64_t* pcs, bool* complete) {
  TableWalkResult result;
  switch (method) {
    case Method::kTable:
    case Method::kTableUncached: {
      const int depth = TableCaptureStack(pcs, kMaxStackDepth, &result);
      *complete = result.complete();
      return depth;
    }
    case Method::kLibunwind:
    case Method::kLibgcc:
      return CaptureStack(pcs, kMaxStackDepth);
    case Method::kFramePointers:
      return FramePointerWalk(pcs, kMaxStackDepth);
  }
  return 0;
}

// Runs the benchmark loop at the bottom of the chain.
int Leaf(void* arg) {
  auto* run = static_cast<BenchRun*>(arg);
  benchmark::State& state = *run->state;
  uint64_t pcs[kMaxStackDepth];
  int depth = 0;
  bool complete = true;
  for (auto _ : state) {
    depth = CaptureOnce(run->method, pcs, &complete);
    benchmark::DoNotOptimize(pcs[0]);
  }
  if (!complete) state.SkipWithError("the table unwinder fell back on this stack");
  state.counters["depth"] = depth;
  state.counters["ns_per_frame"] =
      benchmark::Counter(static_cast<double>(depth) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  return depth;
}

template <class Context, class RunFn>
void InChain(benchmark::State& state, Method method, RunFn run_chain) {
  const bool table = method == Method::kTable || method == Method::kTableUncached;
  if (table && !InitTableUnwinder()) {
    state.SkipWithError("no .eh_frame tables");
    return;
  }
  if (method == Method::kLibunwind && !UseUnwinder(UnwinderKind::kLibunwind)) {
    state.SkipWithError("no libunwind");
    return;
  }
  if (method == Method::kLibgcc) UseUnwinder(UnwinderKind::kLibgcc);
  BenchRun run{&state, method};
  Context context;
  context.leaf = Leaf;
  context.arg = &run;
  UseTableRuleCache(method != Method::kTableUncached);
  run_chain(kChainLevels, &context);
  UseTableRuleCache(true);
}

void NoFramePointers(benchmark::State& state, Method method) {
  InChain<chain_nofp::ChainContext>(state, method, chain_nofp::Run);
}

void WithFramePointers(benchmark::State& state, Method method) {
  InChain<chain_fp::ChainContext>(state, method, chain_fp::Run);
}

BENCHMARK_CAPTURE(NoFramePointers, Table, Method::kTable);
BENCHMARK_CAPTURE(NoFramePointers, TableUncached, Method::kTableUncached);
BENCHMARK_CAPTURE(NoFramePointers, Libunwind, Method::kLibunwind);
BENCHMARK_CAPTURE(NoFramePointers, Libgcc, Method::kLibgcc);
BENCHMARK_CAPTURE(NoFramePointers, FramePointers, Method::kFramePointers);
BENCHMARK_CAPTURE(WithFramePointers, Table, Method::kTable);
BENCHMARK_CAPTURE(WithFramePointers, TableUncached, Method::kTableUncached);
BENCHMARK_CAPTURE(WithFramePointers, Libunwind, Method::kLibunwind);
BENCHMARK_CAPTURE(WithFramePointers, FramePointers, Method::kFramePointers);

}  // namespace
}  // namespace gpuperf

BENCHMARK_MAIN();
