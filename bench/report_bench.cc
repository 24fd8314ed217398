// `gpuperf report` end to end on a large synthetic trace: read, aggregate, render.
// Budget (docs/report.md, DESIGN.md): 10 M kernels in <= 5 s on a 2-core machine.
//
// The trace is generated once and kept in $TMPDIR (gpuperf_report_bench_<N>.gpt), so
// reruns measure only the report. GPUPERF_BENCH_KERNELS changes N (default 10 M).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "analyze/report/report_model.h"
#include "export/report_export.h"
#include "synth/synthetic_trace.h"

namespace {

uint64_t KernelCount() {
  const char* env = std::getenv("GPUPERF_BENCH_KERNELS");
  return env ? std::strtoull(env, nullptr, 10) : 10'000'000;
}

const std::string& TracePath() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string p = std::string(tmp ? tmp : "/tmp") + "/gpuperf_report_bench_" +
                    std::to_string(KernelCount()) + ".gpt";
    if (!std::filesystem::exists(p)) {
      std::fprintf(stderr, "generating %s ...\n", p.c_str());
      gpuperf::synth::SyntheticOptions options;
      options.kernels = KernelCount();
      gpuperf::Status s = gpuperf::synth::WriteSyntheticTrace(p + ".tmp", options);
      if (!s.ok()) {
        std::fprintf(stderr, "cannot write the trace: %s\n", s.message().c_str());
        std::exit(1);
      }
      std::filesystem::rename(p + ".tmp", p);
    }
    return p;
  }();
  return path;
}

void BM_ReportEndToEnd(benchmark::State& state) {
  const std::string& path = TracePath();
  uint64_t kernels = 0;
  for (auto _ : state) {
    auto model = gpuperf::BuildReport(path, gpuperf::ReportOptions{});
    if (!model.ok()) {
      state.SkipWithError(model.status().message().c_str());
      return;
    }
    kernels = model->summary.kernels;
    gpuperf::SortAndTrim(*model, gpuperf::ReportSort::kTotal, 30);
    std::ostringstream out;
    gpuperf::Status s = gpuperf::ExportReportText(*model, {}, out);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(out.str().size());
  }
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["kernels_per_s"] = benchmark::Counter(
      static_cast<double>(kernels), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReportEndToEnd)->Unit(benchmark::kSecond)->Iterations(3)->UseRealTime();

void BM_ReportJson(benchmark::State& state) {
  const std::string& path = TracePath();
  for (auto _ : state) {
    auto model = gpuperf::BuildReport(path, gpuperf::ReportOptions{});
    std::ostringstream out;
    gpuperf::Status s = gpuperf::ExportReportJson(*model, {}, out);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_ReportJson)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
