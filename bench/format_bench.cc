// Trace format throughput: kernel records written and read per second on one core, and
// bytes per kernel record on disk for a realistic mix (repeated names, rising timestamps).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <span>

#include "gpuperf/trace_reader.h"
#include "gpuperf/trace_writer.h"
#include "synth/synthetic_trace.h"

namespace {

std::string TempPath(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("gpuperf_bench_") + std::to_string(getpid()) + name))
      .string();
}

// Kernels as a recording produces them: ~120 names, Zipf-like reuse, rising timestamps.
std::vector<gpuperf::KernelRecord> MakeKernels(gpuperf::TraceWriter& writer, size_t n) {
  std::vector<gpuperf::StringId> names;
  for (int i = 0; i < 120; ++i) {
    names.push_back(writer.InternString("_ZN2at6native18elementwise_kernelILi128ELi" +
                                        std::to_string(i) + "EEEviT1_"));
  }
  std::vector<gpuperf::KernelRecord> kernels(n);
  uint64_t t = 1'000'000'000;
  uint64_t state = 88172645463325252ull;
  for (size_t i = 0; i < n; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const uint32_t r = static_cast<uint32_t>(state % 1000);
    auto& k = kernels[i];
    k.pid = 4242;
    k.name = names[(r * r / 1000) * 120 / 1000];
    k.device_id = 0;
    k.context_id = 1;
    k.stream_id = 7 + (state >> 32) % 4;
    t += 2000 + (state >> 40) % 3000;
    k.start_ns = t;
    k.end_ns = t + 1500 + (state >> 20) % 20000;
    k.grid_x = 1u << (r % 12);
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 32;
    k.correlation_id = static_cast<uint32_t>(2 * i + 1);
  }
  return kernels;
}

void BM_WriteKernels(benchmark::State& state) {
  const std::string path = TempPath("_write.gpt");
  const size_t n = 1'000'000;
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto writer = gpuperf::TraceWriter::Create(path);
    auto kernels = MakeKernels(**writer, n);
    state.ResumeTiming();
    for (const auto& k : kernels) (*writer)->Add(k);
    (void)(*writer)->Close();
    bytes = std::filesystem::file_size(path);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["bytes_per_kernel"] = static_cast<double>(bytes) / n;
  std::filesystem::remove(path);
}
BENCHMARK(BM_WriteKernels)->Unit(benchmark::kMillisecond)->UseRealTime();

class CountingSink final : public gpuperf::RecordSink {
 public:
  void OnKernel(std::span<const gpuperf::KernelRecord> records) override {
    count += records.size();
    for (const auto& k : records) sum += k.end_ns - k.start_ns;
  }
  uint64_t count = 0, sum = 0;
};

void BM_ReadKernels(benchmark::State& state) {
  const std::string path = TempPath("_read.gpt");
  const size_t n = 1'000'000;
  {
    auto writer = gpuperf::TraceWriter::Create(path);
    for (const auto& k : MakeKernels(**writer, n)) (*writer)->Add(k);
    (void)(*writer)->Close();
  }
  for (auto _ : state) {
    CountingSink sink;
    (void)gpuperf::ReadTrace(path, sink, nullptr);
    benchmark::DoNotOptimize(sink.sum);
  }
  state.SetItemsProcessed(state.iterations() * n);
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReadKernels)->Unit(benchmark::kMillisecond)->UseRealTime();

// The synthetic process mix (API records, launch links, copies, stacks, symbols).
void BM_WriteSyntheticMix(benchmark::State& state) {
  const std::string path = TempPath("_mix.gpt");
  gpuperf::synth::SyntheticOptions options;
  options.kernels = 500'000;
  for (auto _ : state) {
    (void)gpuperf::synth::WriteSyntheticTrace(path, options);
  }
  state.SetItemsProcessed(state.iterations() * options.kernels);
  state.counters["bytes_per_kernel_all_records"] =
      static_cast<double>(std::filesystem::file_size(path)) / options.kernels;
  std::filesystem::remove(path);
}
BENCHMARK(BM_WriteSyntheticMix)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
