// A CUDA C++ program for gpuperf attach's GPU check (tests/gpu/checks/attach.sh), started
// without gpuperf: steps of a few small kernels on one stream, each step synchronized and
// timed. Built with nvcc's defaults, so the CUDA runtime is linked statically and only libcuda
// is loaded at run time: the static-cudart case of attach.
//
// usage: attach_steps STEPS_FILE STOP_FILE MAX_SECONDS
//   one line per step in STEPS_FILE: "END_NS STEP_NS" (CLOCK_MONOTONIC, the step's end and
//   length); ends when STOP_FILE exists or after MAX_SECONDS; "attach-steps: ready pid=P" on
//   stdout once warm, "attach-steps: done steps=N" at the end.
#include <cuda_runtime.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

__global__ void scale_kernel(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + 1.0f;
}

__global__ void sum_kernel(const float* data, int n, float* out) {
  float total = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) total += data[i];
  atomicAdd(out, total);
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// One step: what a small inference step's launches look like, then a synchronization.
__attribute__((noinline)) void run_step(float* data, float* out, int n, cudaStream_t stream) {
  for (int layer = 0; layer < 24; ++layer) {
    scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(data, n, 0.999f);
  }
  sum_kernel<<<1, 256, 0, stream>>>(data, n, out);
  cudaStreamSynchronize(stream);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s STEPS_FILE STOP_FILE MAX_SECONDS\n", argv[0]);
    return 2;
  }
  FILE* steps = std::fopen(argv[1], "w");
  if (steps == nullptr) return 1;
  const uint64_t limit_ns = static_cast<uint64_t>(std::atof(argv[3]) * 1e9);
  const int n = 1 << 20;
  float *data = nullptr, *out = nullptr;
  cudaStream_t stream;
  if (cudaMalloc(&data, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, sizeof(float)) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess) {
    std::fprintf(stderr, "attach-steps: CUDA failed\n");
    return 1;
  }
  cudaMemset(data, 0, n * sizeof(float));
  for (int warm = 0; warm < 50; ++warm) run_step(data, out, n, stream);
  std::printf("attach-steps: ready pid=%d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  const uint64_t start = MonotonicNs();
  long count = 0;
  for (;;) {
    const uint64_t begin = MonotonicNs();
    run_step(data, out, n, stream);
    const uint64_t end = MonotonicNs();
    std::fprintf(steps, "%llu %llu\n", static_cast<unsigned long long>(end),
                 static_cast<unsigned long long>(end - begin));
    ++count;
    if (count % 64 == 0) {
      std::fflush(steps);
      if (access(argv[2], F_OK) == 0 || end - start > limit_ns) break;
    }
  }
  std::fclose(steps);
  const cudaError_t error = cudaGetLastError();
  std::printf("attach-steps: done steps=%ld error=%s\n", count, cudaGetErrorName(error));
  return error == cudaSuccess ? 0 : 1;
}
