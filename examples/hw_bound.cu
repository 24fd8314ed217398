// Kernels whose bottleneck is known, for `gpuperf metrics` and `gpuperf record --pc-sampling`:
//   copy     streams two 256 MiB arrays (memory bound: DRAM near its peak)
//   fma      eight independent FMA chains per thread, no memory traffic (compute bound)
//   latency  one warp per SM chasing pointers through 256 MiB (latency bound, low occupancy)
//   hotloop  a dependent loop on lines marked "hot loop" (where PC samples must land)
// Each kernel runs once to warm up, then --repeat times (default 3); with --nvtx those timed
// launches are an NVTX range named after the kernel (setup and warm-up stay outside, so a
// range's metrics are the kernel's). The program times each phase with CUDA events and prints,
// besides the summary line, "hw_bound: kernel=... ms=... bytes=... gbps=..." per phase, and the
// device's peak DRAM bandwidth from its attributes, so a check can compare gpuperf's numbers with
// the program's own.
//
// usage: hw_bound [--kernel copy|fma|latency|hotloop|all] [--repeat N] [--nvtx]
#include <nvtx3/nvToolsExt.h>

#include <string>
#include <vector>

#include "common.h"

__global__ void copy_kernel(const float4* in, float4* out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = in[i];
  }
}

__global__ void fma_kernel(float* out, int iterations) {
  float a[8];
  for (int c = 0; c < 8; ++c) a[c] = threadIdx.x * 0.001f + c;
  for (int k = 0; k < iterations; ++k) {
#pragma unroll
    for (int c = 0; c < 8; ++c) a[c] = a[c] * 0.9999f + 0.0001f;
  }
  float sum = 0;
  for (int c = 0; c < 8; ++c) sum += a[c];
  if (sum == 12345.678f) out[threadIdx.x] = sum;  // never true: keeps the chains alive
}

__global__ void latency_kernel(const unsigned* next, unsigned* out, int steps) {
  unsigned j = (blockIdx.x * 7919u + threadIdx.x * 104729u) & 0xffffu;
  for (int s = 0; s < steps; ++s) j = next[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = j;
}

__global__ void hot_loop_kernel(float* out, const float* in, int n, int iterations) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  float y = 1.0f;
  for (int k = 0; k < iterations; ++k) {  // hot loop begins
    y = y * x + 0.5f;
    x = x * 0.999f + y * 0.001f;
  }  // hot loop ends
  out[i] = x + y;
}

namespace {

struct Phase {
  std::string kernel;
  float ms = 0;
  double bytes = 0;  // DRAM traffic the program knows of (copy only)
};

void Report(const Phase& p) {
  std::printf("hw_bound: kernel=%s ms=%.4f bytes=%.0f gbps=%.1f\n", p.kernel.c_str(), p.ms, p.bytes,
              p.ms > 0 ? p.bytes / (p.ms * 1e6) : 0.0);
}

bool g_nvtx = false;

// Times `repeat` launches of `launch` with events (after one to warm up, which also loads the
// module); the per-launch average. With --nvtx the timed launches are the range `name`.
template <class Launch>
float TimeLaunches(const char* name, int repeat, Launch launch) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  if (g_nvtx) nvtxRangePushA(name);
  CUDA_CHECK(cudaEventRecord(start));
  for (int r = 0; r < repeat; ++r) launch();
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  if (g_nvtx) nvtxRangePop();
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return ms / repeat;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[--kernel copy|fma|latency|hotloop|all] [--repeat N] [--nvtx]";
  std::string which = "all";
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) {
      which = argv[++i];
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = static_cast<int>(examples::ParsePositive(argv[++i], "--repeat"));
    } else if (std::strcmp(argv[i], "--nvtx") == 0) {
      g_nvtx = true;
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  if (which != "all" && which != "copy" && which != "fma" && which != "latency" &&
      which != "hotloop") {
    examples::DieUsage(argv[0], usage);
  }
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = EXAMPLE_NAME("hw_bound");

  int device = 0, sms = 0, bus_bits = 0, memory_khz = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
  // Double data rate: two transfers per memory clock.
  const double peak_gbps = 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  std::printf("hw_bound: sms=%d peak_dram_gbps=%.1f\n", sms, peak_gbps);

  auto run = [&](const char* name, auto body) {
    if (which != "all" && which != name) return;
    Phase phase = body();
    phase.kernel = name;
    Report(phase);
    summary.kernels += repeat + 1;
    summary.nvtx_ranges += g_nvtx ? 1 : 0;
  };

  run("copy", [&] {
    const size_t n = size_t{16} << 20;  // float4s: 256 MiB per array
    float4 *in = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&in, n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&out, n * sizeof(float4)));
    CUDA_CHECK(cudaMemset(in, 1, n * sizeof(float4)));
    summary.memset_bytes += static_cast<long long>(n * sizeof(float4));
    Phase p;
    p.ms = TimeLaunches("copy", repeat, [&] {
      copy_kernel<<<sms * 8, 256>>>(in, out, n);
      CUDA_CHECK_LAUNCH();
    });
    p.bytes = 2.0 * n * sizeof(float4);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    return p;
  });
  run("fma", [&] {
    float* out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, 1024 * sizeof(float)));
    Phase p;
    p.ms = TimeLaunches("fma", repeat, [&] {
      fma_kernel<<<sms * 16, 256>>>(out, 4096);
      CUDA_CHECK_LAUNCH();
    });
    CUDA_CHECK(cudaFree(out));
    return p;
  });
  run("latency", [&] {
    const size_t n = size_t{64} << 20;  // 256 MiB of indexes: a random cycle
    std::vector<unsigned> next(n);
    examples::Lcg lcg(7);
    for (size_t i = 0; i < n; ++i) next[i] = static_cast<unsigned>(i);
    for (size_t i = n - 1; i > 0; --i) std::swap(next[i], next[lcg.Next() % (i + 1)]);
    unsigned *d_next = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_next, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&out, sms * 32 * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_next, next.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    summary.memcpy_bytes += static_cast<long long>(n * sizeof(unsigned));
    Phase p;
    p.ms = TimeLaunches("latency", repeat, [&] {
      latency_kernel<<<sms, 32>>>(d_next, out, 2048);
      CUDA_CHECK_LAUNCH();
    });
    CUDA_CHECK(cudaFree(d_next));
    CUDA_CHECK(cudaFree(out));
    return p;
  });
  run("hotloop", [&] {
    const int n = sms * 4 * 256;
    float *in = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(in, 0, n * sizeof(float)));
    summary.memset_bytes += n * sizeof(float);
    Phase p;
    p.ms = TimeLaunches("hotloop", repeat, [&] {
      hot_loop_kernel<<<n / 256, 256>>>(out, in, n, 200000);
      CUDA_CHECK_LAUNCH();
    });
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    return p;
  });
  CUDA_CHECK(cudaDeviceSynchronize());
  summary.wall_ms = timer.ElapsedMs();
  examples::PrintSummary(summary);
  return 0;
}
