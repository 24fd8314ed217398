// Nanoseconds per frame of each native unwinder on a stack through three shared libraries
// and libc's qsort_r (tests/unwind/chain.h), captured at the bottom of the chain:
//   Table:         the .eh_frame table unwinder (src/unwind/table_unwinder.h), its
//                  per-thread rule cache warm (a stack seen before, as most launches are);
//   TableUncached: the same with the cache off: two searches per frame (a new stack);
//   Libunwind:     unw_backtrace with its per-thread cache;
//   Libgcc:        _Unwind_Backtrace;
//   FramePointers: the frame-pointer walk, which is only right where every frame keeps a
//                  frame record (see the depth counter: on the -fomit-frame-pointer chain
//                  it gets lost).
// and the whole launch-stack path that a CUDA launch pays (CaptureLaunchStack in
// src/inject/stack/stack_capture.cc: unwind, trim, intern a stack seen before), in each
// GPUPERF_UNWIND mode: CapturePath/table, /libunwind, /auto (a frame-pointer walk that
// libunwind refused for this stack, then the tables) and /fp.
// Each runs on the chain built with -fomit-frame-pointer (NoFramePointers) and with frame
// pointers (WithFramePointers); Realigned enters the first through a function that realigns
// the stack (its CFA is *(RBP-8)). Counters: depth (frames captured) and ns_per_frame (time per
// capture / depth). The issue-12 budget for the capture path with the table unwinder is 20 ns per
// frame (median): run with --benchmark_repetitions=5 and read the _median rows.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "unwind/table_unwinder.h"
#include "unwind/unwinder.h"
#ifdef GP_BENCH_CAPTURE_PATH
#include <vector>

#include "inject/stack/stack_capture.h"
#endif

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

void Realigned(benchmark::State& state, Method method) {
  InChain<chain_nofp::ChainContext>(state, method, [](int levels, chain_nofp::ChainContext* c) {
    c->realign = true;
    return chain_nofp::Run(levels, c);
  });
}

void WithFramePointers(benchmark::State& state, Method method) {
  InChain<chain_fp::ChainContext>(state, method, chain_fp::Run);
}

#ifdef GP_BENCH_CAPTURE_PATH
// The launch-stack path, as the injection library runs it at a launch (its own frames,
// here the capture library's, are unwound and then trimmed).
struct PathRun {
  benchmark::State* state;
  inject::UnwindMode mode;
};

__attribute__((noinline)) StackId CapturePathOnce(inject::StackSource* source) {
  const StackId id = inject::CaptureLaunchStack(source);
  benchmark::DoNotOptimize(id);
  return id;
}

size_t InternedDepth(StackId id) {
  std::vector<StackRecord> stacks;
  inject::DrainNewStacks(stacks, 1);
  static std::vector<StackRecord> all;
  all.insert(all.end(), stacks.begin(), stacks.end());
  for (const StackRecord& stack : all) {
    if (stack.id == id) return stack.pcs.size();
  }
  return 0;
}

int PathLeaf(void* arg) {
  auto* run = static_cast<PathRun*>(arg);
  benchmark::State& state = *run->state;
  inject::StackCaptureOptions options;
  options.max_depth = 128;
  options.unwind = run->mode;
  options.python = false;
  inject::InitStackCapture(options);
  inject::StackSource source = inject::StackSource::kNone;
  StackId id = 0;
  // Twice before timing, from the same call site (the same stack): the first sight of a
  // frame-pointer stack is checked by libunwind. Volatile: a loop the compiler peeled would
  // call from three sites.
  volatile int warm_ups = 2;
  for (int warm_up = warm_ups; warm_up > 0 || state.KeepRunning(); --warm_up) {
    id = CapturePathOnce(&source);
  }
  const bool expected_source =
      run->mode == inject::UnwindMode::kLibunwind       ? source == inject::StackSource::kLibunwind
      : run->mode == inject::UnwindMode::kFramePointers ? source != inject::StackSource::kTable
                                                        : source != inject::StackSource::kLibunwind;
  if (!expected_source) state.SkipWithError("the stack did not come from the mode's unwinder");
  const auto depth = static_cast<double>(InternedDepth(id));
  state.counters["depth"] = depth;
  state.counters["ns_per_frame"] =
      benchmark::Counter(depth * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(source == inject::StackSource::kTable           ? "from tables"
                 : source == inject::StackSource::kFramePointers ? "from frame pointers"
                                                                 : "from libunwind");
  return 1;
}

template <class Context, class RunFn>
void CapturePathInChain(benchmark::State& state, inject::UnwindMode mode, RunFn run_chain) {
  if (!InitTableUnwinder() || !UseUnwinder(UnwinderKind::kLibunwind)) {
    state.SkipWithError("no .eh_frame tables or no libunwind");
    return;
  }
  PathRun run{&state, mode};
  Context context;
  context.leaf = PathLeaf;
  context.arg = &run;
  run_chain(kChainLevels, &context);
}

void CapturePathNoFramePointers(benchmark::State& state, inject::UnwindMode mode) {
  CapturePathInChain<chain_nofp::ChainContext>(state, mode, chain_nofp::Run);
}
void CapturePathWithFramePointers(benchmark::State& state, inject::UnwindMode mode) {
  CapturePathInChain<chain_fp::ChainContext>(state, mode, chain_fp::Run);
}

BENCHMARK_CAPTURE(CapturePathNoFramePointers, table, inject::UnwindMode::kTable);
BENCHMARK_CAPTURE(CapturePathNoFramePointers, libunwind, inject::UnwindMode::kLibunwind);
BENCHMARK_CAPTURE(CapturePathNoFramePointers, auto, inject::UnwindMode::kAuto);
BENCHMARK_CAPTURE(CapturePathWithFramePointers, table, inject::UnwindMode::kTable);
BENCHMARK_CAPTURE(CapturePathWithFramePointers, libunwind, inject::UnwindMode::kLibunwind);
BENCHMARK_CAPTURE(CapturePathWithFramePointers, auto, inject::UnwindMode::kAuto);
#endif

BENCHMARK_CAPTURE(NoFramePointers, Table, Method::kTable);
BENCHMARK_CAPTURE(NoFramePointers, TableUncached, Method::kTableUncached);
BENCHMARK_CAPTURE(NoFramePointers, Libunwind, Method::kLibunwind);
BENCHMARK_CAPTURE(NoFramePointers, Libgcc, Method::kLibgcc);
BENCHMARK_CAPTURE(NoFramePointers, FramePointers, Method::kFramePointers);
BENCHMARK_CAPTURE(Realigned, Table, Method::kTable);
BENCHMARK_CAPTURE(Realigned, Libunwind, Method::kLibunwind);
BENCHMARK_CAPTURE(WithFramePointers, Table, Method::kTable);
BENCHMARK_CAPTURE(WithFramePointers, TableUncached, Method::kTableUncached);
BENCHMARK_CAPTURE(WithFramePointers, Libunwind, Method::kLibunwind);
BENCHMARK_CAPTURE(WithFramePointers, FramePointers, Method::kFramePointers);

}  // namespace
}  // namespace gpuperf

BENCHMARK_MAIN();
