// cuBLAS GEMMs: single precision at a few sizes, half precision through cublasGemmEx (tensor
// cores) and a strided batched GEMM. cuBLAS launches its kernels itself (through the driver
// API), and how many kernels one call launches is its own business (split-K adds a
// reduction), so the summary reports kernels=-1 and the number of cuBLAS calls as
// cublas_calls=. Every result is checked against a double-precision host computation.
//
// usage: cublas_gemm [--iterations I] [--repeat R]
//   --repeat R  issues every GEMM R times on the same operands (a cuBLAS-heavy run for the
//               overhead harness; the result of the last one is checked)
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <vector>

#include "common.h"

#define CUBLAS_CHECK(call)                                                      \
  do {                                                                          \
    cublasStatus_t cublas_check_status_ = (call);                               \
    if (cublas_check_status_ != CUBLAS_STATUS_SUCCESS) {                        \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cublasGetStatusString(cublas_check_status_));                \
      std::exit(::examples::kExitCudaError);                                    \
    }                                                                           \
  } while (0)

namespace {

long long g_cublas_calls = 0;
int g_repeat = 1;
long long g_memcpy_bytes = 0;

// A column-major matrix on host and device.
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<float> host;
  float* device = nullptr;
};

Matrix MakeMatrix(int rows, int cols, examples::Lcg& rng) {
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.host.resize(static_cast<size_t>(rows) * cols);
  for (float& v : m.host) v = rng.Uniform(1.0f);
  const size_t bytes = m.host.size() * sizeof(float);
  CUDA_CHECK(cudaMalloc(&m.device, bytes));
  CUDA_CHECK(cudaMemcpy(m.device, m.host.data(), bytes, cudaMemcpyHostToDevice));
  g_memcpy_bytes += static_cast<long long>(bytes);
  return m;
}

std::vector<float> Download(const float* device, size_t n) {
  std::vector<float> host(n);
  CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost));
  g_memcpy_bytes += static_cast<long long>(n * sizeof(float));
  return host;
}

// C = A * B (column-major, m x k times k x n) checked on `samples` entries (all when 0).
void CheckProduct(const std::vector<float>& a, const std::vector<float>& b,
                  const std::vector<float>& c, int m, int n, int k, int samples, float tolerance,
                  const char* what) {
  examples::Lcg rng(99);
  const long long entries = static_cast<long long>(m) * n;
  const long long count = samples > 0 ? samples : entries;
  for (long long s = 0; s < count; ++s) {
    const long long idx = samples > 0 ? rng.Next() % entries : s;
    const int i = static_cast<int>(idx % m);
    const int j = static_cast<int>(idx / m);
    double want = 0;
    for (int t = 0; t < k; ++t) {
      want += static_cast<double>(a[i + static_cast<size_t>(t) * m]) *
              b[t + static_cast<size_t>(j) * k];
    }
    const float got = c[i + static_cast<size_t>(j) * m];
    if (!(std::fabs(got - want) <= tolerance * (1.0 + std::fabs(want)))) {
      std::fprintf(stderr, "%s: C(%d,%d) = %.7g, expected %.7g\n", what, i, j, got, want);
      examples::DieWrong(what);
    }
  }
}

}  // namespace

__attribute__((noinline)) void sgemm(cublasHandle_t handle, int size, examples::Lcg& rng) {
  Matrix a = MakeMatrix(size, size, rng), b = MakeMatrix(size, size, rng);
  float* c = nullptr;
  CUDA_CHECK(cudaMalloc(&c, static_cast<size_t>(size) * size * sizeof(float)));
  const float alpha = 1.0f, beta = 0.0f;
  for (int r = 0; r < g_repeat; ++r) {
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a.device,
                             size, b.device, size, &beta, c, size));
    ++g_cublas_calls;
  }
  std::vector<float> result = Download(c, static_cast<size_t>(size) * size);
  CheckProduct(a.host, b.host, result, size, size, size, size <= 128 ? 0 : 256, 1e-4f, "sgemm");
  CUDA_CHECK(cudaFree(a.device));
  CUDA_CHECK(cudaFree(b.device));
  CUDA_CHECK(cudaFree(c));
}

// Half inputs, float accumulation and output: the tensor-core path.
__attribute__((noinline)) void gemm_ex_half(cublasHandle_t handle, int size, examples::Lcg& rng) {
  const size_t n = static_cast<size_t>(size) * size;
  std::vector<__half> a_half(n), b_half(n);
  std::vector<float> a_rounded(n), b_rounded(n);
  for (size_t i = 0; i < n; ++i) {
    a_half[i] = __float2half(rng.Uniform(1.0f));
    b_half[i] = __float2half(rng.Uniform(1.0f));
    a_rounded[i] = __half2float(a_half[i]);
    b_rounded[i] = __half2float(b_half[i]);
  }
  __half *a = nullptr, *b = nullptr;
  float* c = nullptr;
  CUDA_CHECK(cudaMalloc(&a, n * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&b, n * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&c, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(a, a_half.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b, b_half.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  g_memcpy_bytes += static_cast<long long>(2 * n * sizeof(__half));
  const float alpha = 1.0f, beta = 0.0f;
  for (int r = 0; r < g_repeat; ++r) {
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a,
                              CUDA_R_16F, size, b, CUDA_R_16F, size, &beta, c, CUDA_R_32F, size,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    ++g_cublas_calls;
  }
  std::vector<float> result = Download(c, n);
  CheckProduct(a_rounded, b_rounded, result, size, size, size, 256, 1e-3f, "gemm_ex_half");
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
}

__attribute__((noinline)) void sgemm_strided_batched(cublasHandle_t handle, int size, int batch,
                                                     examples::Lcg& rng) {
  const long long stride = static_cast<long long>(size) * size;
  Matrix a = MakeMatrix(size, size * batch, rng), b = MakeMatrix(size, size * batch, rng);
  float* c = nullptr;
  CUDA_CHECK(cudaMalloc(&c, stride * batch * sizeof(float)));
  const float alpha = 1.0f, beta = 0.0f;
  for (int r = 0; r < g_repeat; ++r) {
    CUBLAS_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size,
                                           &alpha, a.device, size, stride, b.device, size, stride,
                                           &beta, c, size, stride, batch));
    ++g_cublas_calls;
  }
  std::vector<float> result = Download(c, stride * batch);
  for (int i = 0; i < batch; ++i) {
    std::vector<float> ai(a.host.begin() + i * stride, a.host.begin() + (i + 1) * stride);
    std::vector<float> bi(b.host.begin() + i * stride, b.host.begin() + (i + 1) * stride);
    std::vector<float> ci(result.begin() + i * stride, result.begin() + (i + 1) * stride);
    CheckProduct(ai, bi, ci, size, size, size, 64, 1e-4f, "sgemm_strided_batched");
  }
  CUDA_CHECK(cudaFree(a.device));
  CUDA_CHECK(cudaFree(b.device));
  CUDA_CHECK(cudaFree(c));
}

int main(int argc, char** argv) {
  const char* usage = "[--iterations I] [--repeat R]";
  int iterations = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = static_cast<int>(examples::ParsePositive(argv[++i], "--iterations"));
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      g_repeat = static_cast<int>(examples::ParsePositive(argv[++i], "--repeat"));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "cublas_gemm";

  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  // A blocking stream: the plain cudaMemcpy calls (legacy stream) are ordered with the GEMMs.
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  // Default math: no TF32 for cublasSgemm, so its checks can be tight; tensor cores for half.
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));

  examples::Lcg rng(5);
  for (int it = 0; it < iterations; ++it) {
    for (int size : {64, 256, 1024}) sgemm(handle, size, rng);
    gemm_ex_half(handle, 512, rng);
    sgemm_strided_batched(handle, 128, 8, rng);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));

  summary.kernels = -1;
  summary.memcpy_bytes = g_memcpy_bytes;
  summary.wall_ms = timer.ElapsedMs();
  summary.AddExtra("cublas_calls", g_cublas_calls);
  examples::PrintSummary(summary);
  return 0;
}
