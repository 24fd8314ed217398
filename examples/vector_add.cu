// The smallest CUDA program worth profiling: copy two vectors in, add them with one kernel a
// few times, copy the sum back and check it. Also built with static cudart (vector_add_static)
// to show that injection-based recording does not depend on libcudart.so.
//
// usage: vector_add [--elements N] [--iterations I]
#include <vector>

#include "common.h"

__global__ void vector_add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__attribute__((noinline)) void add_on_gpu(const float* a, const float* b, float* c, int n) {
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  vector_add_kernel<<<blocks, threads>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

int main(int argc, char** argv) {
  const char* usage = "[--elements N] [--iterations I]";
  int n = 50000;
  int iterations = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--elements") == 0 && i + 1 < argc) {
      n = static_cast<int>(examples::ParsePositive(argv[++i], "--elements"));
    } else if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = static_cast<int>(examples::ParsePositive(argv[++i], "--iterations"));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = EXAMPLE_NAME("vector_add");

  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  std::vector<float> a(n), b(n), c(n, -1.0f);
  examples::Lcg rng(1);
  for (int i = 0; i < n; ++i) {
    a[i] = rng.Uniform(1.0f);
    b[i] = rng.Uniform(1.0f);
  }

  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  CUDA_CHECK(cudaMalloc(&d_a, bytes));
  CUDA_CHECK(cudaMalloc(&d_b, bytes));
  CUDA_CHECK(cudaMalloc(&d_c, bytes));
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
  summary.memcpy_bytes += 2 * bytes;

  for (int it = 0; it < iterations; ++it) {
    add_on_gpu(d_a, d_b, d_c, n);
    ++summary.kernels;
  }
  CUDA_CHECK(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost));
  summary.memcpy_bytes += bytes;

  for (int i = 0; i < n; ++i) {
    if (c[i] != a[i] + b[i]) {
      std::fprintf(stderr, "c[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
      examples::DieWrong("vector sum");
    }
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));

  summary.wall_ms = timer.ElapsedMs();
  examples::PrintSummary(summary);
  return 0;
}
