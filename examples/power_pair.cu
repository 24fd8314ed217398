// Two kernels that draw very different power from the same GPU, one phase after the other,
// for checking gpuperf's energy estimates (docs/energy.md): tensor_burn keeps every SM's
// tensor cores busy with half-precision matrix multiply-accumulates (near the board's power
// limit); idle_spin has one warp per SM sleep-waiting on the clock (close to idle power).
// Each phase launches ~10 ms kernels back to back for --seconds.
//
// usage: power_pair [--seconds S]        (default 3 per phase)
#include <mma.h>

#include <algorithm>

#include "common.h"

__global__ void tensor_burn(float* sink, int iterations) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(a, __float2half(0.001f * (threadIdx.x % 7)));
  wmma::fill_fragment(b, __float2half(0.002f));
  wmma::fill_fragment(c, 0.0f);
  for (int i = 0; i < iterations; ++i) wmma::mma_sync(c, a, b, c);
  // Never true; keeps the loop from being optimized away.
  if (c.x[0] == -1.0f) sink[blockIdx.x] = c.x[0];
}

__global__ void idle_spin(long long cycles, int* sink) {
  const long long start = clock64();
  while (clock64() - start < cycles) __nanosleep(2000);
  if (threadIdx.x == 1024) *sink = 1;  // never: there are 32 threads
}

namespace {

// Runs `launch` back to back for `seconds`; returns the number of kernels.
template <class Launch>
long long Phase(double seconds, Launch launch) {
  examples::WallTimer timer;
  long long kernels = 0;
  while (timer.ElapsedMs() < seconds * 1000) {
    for (int i = 0; i < 10; ++i, ++kernels) launch();
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  return kernels;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = static_cast<double>(examples::ParsePositive(argv[++i], "--seconds"));
    } else {
      examples::DieUsage(argv[0], "[--seconds S]");
    }
  }
  examples::WallTimer wall;
  examples::Summary summary;
  summary.name = EXAMPLE_NAME("power_pair");
  int device = 0, sms = 0, clock_khz = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  float* sink = nullptr;
  int* flag = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, sizeof(float) * sms * 16));
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));

  // Size tensor_burn to ~10 ms from a timed trial.
  const int blocks = sms * 4, threads = 256;
  int iterations = 20000;
  cudaEvent_t begin, end;
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreate(&end));
  CUDA_CHECK(cudaEventRecord(begin));
  tensor_burn<<<blocks, threads>>>(sink, iterations);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(end));
  CUDA_CHECK(cudaEventSynchronize(end));
  float trial_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&trial_ms, begin, end));
  iterations = static_cast<int>(iterations * 10.0 / std::max(trial_ms, 0.01f));
  const long long spin_cycles = static_cast<long long>(clock_khz) * 10;  // 10 ms

  const long long burns = Phase(seconds, [&] {
    tensor_burn<<<blocks, threads>>>(sink, iterations);
    CUDA_CHECK_LAUNCH();
  });
  const long long spins = Phase(seconds, [&] {
    idle_spin<<<sms, 32>>>(spin_cycles, flag);
    CUDA_CHECK_LAUNCH();
  });
  CUDA_CHECK(cudaFree(sink));
  CUDA_CHECK(cudaFree(flag));
  summary.kernels = 1 + burns + spins;
  summary.wall_ms = wall.ElapsedMs();
  summary.AddExtra("tensor_burn", burns);
  summary.AddExtra("idle_spin", spins);
  summary.AddExtra("burn_iterations", static_cast<long long>(iterations));
  examples::PrintSummary(summary);
  return 0;
}
