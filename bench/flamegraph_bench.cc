// The flame graph of a 10M-kernel trace (budget: report + flame graph <= 5 s on 2 cores).
// Reports the whole `gpuperf flamegraph` path (stream, join, aggregate, draw) and the
// bare read for comparison, so the join's own cost is the difference.
//   GPUPERF_BENCH_KERNELS=N changes the trace size (default 10,000,000).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "analyze/flame/flamegraph.h"
#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "synth/synthetic_trace.h"

namespace {

uint64_t BenchKernels() {
  const char* env = std::getenv("GPUPERF_BENCH_KERNELS");
  return env ? std::strtoull(env, nullptr, 10) : 10'000'000;
}

// One synthetic trace per run, made on first use and removed at exit.
const std::string& TracePath() {
  static const std::string path = [] {
    std::string p = (std::filesystem::temp_directory_path() /
                     ("gpuperf_flamegraph_bench_" + std::to_string(getpid()) + ".gpt"))
                        .string();
    gpuperf::synth::SyntheticOptions options;
    options.kernels = BenchKernels();
    gpuperf::Status status = gpuperf::synth::WriteSyntheticTrace(p, options);
    if (!status.ok()) {
      std::fprintf(stderr, "cannot write %s: %s\n", p.c_str(), status.message().c_str());
      std::exit(1);
    }
    std::atexit([] { std::filesystem::remove(TracePath()); });
    return p;
  }();
  return path;
}

struct NullSink : gpuperf::RecordSink {};

void BM_ReadOnly(benchmark::State& state) {
  const std::string& path = TracePath();
  for (auto _ : state) {
    NullSink sink;
    gpuperf::ReadReport report;
    gpuperf::Status status = gpuperf::ReadTrace(path, sink, &report);
    if (!status.ok()) state.SkipWithError(status.message().c_str());
  }
  state.counters["kernels"] = static_cast<double>(BenchKernels());
}

void BM_FlamegraphSvg(benchmark::State& state) {
  const std::string& path = TracePath();
  size_t bytes = 0;
  for (auto _ : state) {
    gpuperf::FlameGraphOptions options;
    gpuperf::ReadReport report;
    auto graph = gpuperf::BuildFlameGraphFromFile(path, options, &report);
    if (!graph.ok()) {
      state.SkipWithError(graph.status().message().c_str());
      break;
    }
    std::ostringstream out;
    gpuperf::Status status = gpuperf::ExportFlamegraphSvg(*graph, options, {}, out);
    if (!status.ok()) state.SkipWithError(status.message().c_str());
    bytes = out.str().size();
    if (graph->summary.correlation.kernels.joined != BenchKernels()) {
      state.SkipWithError("not every kernel joined");
    }
  }
  state.counters["kernels"] = static_cast<double>(BenchKernels());
  state.counters["svg_bytes"] = static_cast<double>(bytes);
  state.counters["ns_per_kernel"] = benchmark::Counter(
      static_cast<double>(BenchKernels()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_FlamegraphFolded(benchmark::State& state) {
  const std::string& path = TracePath();
  for (auto _ : state) {
    gpuperf::FlameGraphOptions options;
    auto graph = gpuperf::BuildFlameGraphFromFile(path, options, nullptr);
    if (!graph.ok()) {
      state.SkipWithError(graph.status().message().c_str());
      break;
    }
    std::ostringstream out;
    benchmark::DoNotOptimize(gpuperf::ExportFolded(*graph, options.weight, out));
  }
}

}  // namespace

BENCHMARK(BM_ReadOnly)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_FlamegraphSvg)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_FlamegraphFolded)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

BENCHMARK_MAIN();
