// What a launch stack costs in the injection library, and what symbolizing costs after
// the recording:
//   Capture/<unwinder>: one unwind of a ~35-frame stack (libunwind's unw_backtrace,
//     libgcc's _Unwind_Backtrace, glibc's backtrace()), ns per capture;
//   CaptureAndIntern: the whole per-launch path (unwind, trim, intern a known stack);
//   Intern: the lock-free lookup alone, from 1 and 2 threads;
//   Symbolize: libdw on a trace of ~3000 distinct PCs in this binary, libc, libstdc++.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuperf/trace_writer.h"
#include "inject/stack/module_table.h"
#include "inject/stack/stack_table.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwinder.h"

namespace gpuperf {
namespace {

constexpr int kTargetDepth = 35;

// Recurses until the stack is `frames` deep (counting the caller's frames), then runs fn.
template <class Fn>
__attribute__((noinline)) int AtDepth(int remaining, Fn& fn) {
  if (remaining <= 0) return fn();
  int result = AtDepth(remaining - 1, fn);
  benchmark::DoNotOptimize(result);
  return result;
}

// How deep the benchmark's own stack already is, so recursion tops it up to kTargetDepth.
int BaseDepth() {
  uint64_t pcs[kMaxStackDepth];
  return CaptureStack(pcs, kMaxStackDepth);
}

void Capture(benchmark::State& state, UnwinderKind kind) {
  if (!UseUnwinder(kind)) {
    state.SkipWithError("unwinder not available");
    return;
  }
  uint64_t pcs[kMaxStackDepth];
  int depth = 0;
  auto capture = [&] { return depth = CaptureStack(pcs, kMaxStackDepth); };
  int extra = kTargetDepth - BaseDepth() - 1;
  for (auto _ : state) AtDepth(extra, capture);
  state.counters["depth"] = depth;
}

void CaptureAndIntern(benchmark::State& state) {
  InitUnwinder();
  UseUnwinder(UnwinderKind::kLibunwind);
  static StackTable table;
  FrameFilter filter;  // empty: measures the scan of a typical stack with no skip match
  filter.AddRange(1, 2);
  filter.AddRange(3, 4);
  uint64_t pcs[kMaxStackDepth];
  StackId id = 0;
  auto capture = [&] {
    int depth = CaptureStack(pcs, kMaxStackDepth);
    depth = filter.Trim(pcs, depth);
    id = table.Intern(pcs, depth);
    return depth;
  };
  int extra = kTargetDepth - BaseDepth() - 1;
  for (auto _ : state) AtDepth(extra, capture);
  state.counters["stacks"] = table.size();
  state.SetLabel(UnwinderName());
  benchmark::DoNotOptimize(id);
}

// The frame-pointer walk over the same depth: what a launch pays for its stack once the
// walk was checked against libunwind (src/inject/stack/stack_capture.cc). The benchmark binary
// has frame pointers only where its compiler kept them, so the walk may stop early; the
// depth counter says how far it got.
void FramePointers(benchmark::State& state) {
  uint64_t pcs[kMaxStackDepth];
  int depth = 0;
  auto walk = [&] { return depth = FramePointerWalk(pcs, kMaxStackDepth); };
  int extra = kTargetDepth - BaseDepth() - 1;
  for (auto _ : state) AtDepth(extra, walk);
  state.counters["depth"] = depth;
}

void Intern(benchmark::State& state) {
  static StackTable table;
  std::vector<uint64_t> pcs(kTargetDepth);
  for (int i = 0; i < kTargetDepth; ++i) pcs[i] = 0x400000 + 0x1234 * i;
  // A warm table: a few thousand stacks, the one looked up among them.
  for (int s = 0; s < 4000; ++s) {
    pcs[0] = 0x500000 + s;
    table.Intern(pcs.data(), kTargetDepth);
  }
  pcs[0] = 0x500000 + 1234;
  for (auto _ : state) benchmark::DoNotOptimize(table.Intern(pcs.data(), kTargetDepth));
}

// ~1000 spread-out addresses in each of this binary, libc and libstdc++.
std::vector<uint64_t> SamplePcs() {
  std::vector<uint64_t> pcs;
  for (const LoadedModule& m : EnumerateLoadedModules()) {
    std::string base = m.path.substr(m.path.rfind('/') + 1);
    bool wanted = m.path.find("stack_capture_bench") != std::string::npos ||
                  base.starts_with("libc.so") || base.starts_with("libstdc++");
    if (!wanted) continue;
    uint64_t step = (m.end - m.start) / 1000;
    for (uint64_t pc = m.start + step / 2; pc < m.end; pc += step) pcs.push_back(pc | 1);
  }
  return pcs;
}

void Symbolize(benchmark::State& state) {
  std::vector<uint64_t> pcs = SamplePcs();
  std::string file = (std::filesystem::temp_directory_path() /
                      ("gpuperf_symbolize_bench." + std::to_string(getpid()) + ".gpt"))
                         .string();
  SymbolizeSummary summary;
  for (auto _ : state) {
    state.PauseTiming();
    {
      auto writer = TraceWriter::Create(file);
      if (!writer.ok()) {
        state.SkipWithError("cannot write the trace");
        return;
      }
      TraceWriter& w = **writer;
      uint32_t pid = static_cast<uint32_t>(getpid());
      for (const ModuleRecord& r :
           ToModuleRecords(EnumerateLoadedModules(), pid,
                           [&](std::string_view s) { return w.InternString(s); })) {
        w.Add(r);
      }
      // Stacks of 30 PCs: every PC once.
      StackId id = 1;
      for (size_t i = 0; i < pcs.size(); i += 30) {
        StackRecord stack{pid, id++, {}};
        for (size_t j = i; j < pcs.size() && j < i + 30; ++j) stack.pcs.push_back(pcs[j]);
        w.AddStack(stack);
      }
      (void)w.Close();
    }
    state.ResumeTiming();
    summary = SymbolizeSummary();
    Status status = SymbolizeTraceFile(file, {}, &summary);
    if (!status.ok()) state.SkipWithError(status.message().c_str());
  }
  std::filesystem::remove(file);
  state.counters["pcs"] = static_cast<double>(summary.pcs);
  state.counters["with_source"] = static_cast<double>(summary.with_source);
  state.counters["function_only"] = static_cast<double>(summary.function_only);
  state.counters["unresolved"] = static_cast<double>(summary.unresolved);
}

BENCHMARK_CAPTURE(Capture, libunwind, UnwinderKind::kLibunwind);
BENCHMARK_CAPTURE(Capture, libgcc, UnwinderKind::kLibgcc);
BENCHMARK_CAPTURE(Capture, glibc_backtrace, UnwinderKind::kGlibcBacktrace);
BENCHMARK(CaptureAndIntern);
BENCHMARK(FramePointers);
BENCHMARK(Intern)->Threads(1)->Threads(2);
BENCHMARK(Symbolize)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace gpuperf

BENCHMARK_MAIN();
