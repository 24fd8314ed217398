// Kernels launched through the driver API, the path cuBLAS, Triton and most JIT frameworks
// take: cuLaunchKernel and cuLaunchKernelEx on a CUfunction, with driver-API copies
// (cuMemcpyHtoD/DtoH) and sets (cuMemsetD32). Unlike cuBLAS, every count here is exact.
//
// usage: driver_launch [--launches N] [--elements E]
//   N launches through each of cuLaunchKernel and cuLaunchKernelEx (default 100 each)
#include <cuda.h>

#include <vector>

#include "common.h"

#define CU_CHECK(call)                                                                           \
  do {                                                                                           \
    CUresult cu_check_result_ = (call);                                                          \
    if (cu_check_result_ != CUDA_SUCCESS) {                                                      \
      const char* cu_check_name_ = nullptr;                                                      \
      if (cuGetErrorName(cu_check_result_, &cu_check_name_) != CUDA_SUCCESS)                     \
        cu_check_name_ = "unknown error";                                                        \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cu_check_name_); \
      std::exit(::examples::kExitCudaError);                                                     \
    }                                                                                            \
  } while (0)

__global__ void axpy_kernel(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

__attribute__((noinline)) void launch_with_cuLaunchKernel(CUfunction f, CUstream stream,
                                                          CUdeviceptr y, CUdeviceptr x, float a,
                                                          int n) {
  void* params[] = {&y, &x, &a, &n};
  CU_CHECK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params, nullptr));
}

__attribute__((noinline)) void launch_with_cuLaunchKernelEx(CUfunction f, CUstream stream,
                                                            CUdeviceptr y, CUdeviceptr x, float a,
                                                            int n) {
  void* params[] = {&y, &x, &a, &n};
  CUlaunchConfig config = {};
  config.gridDimX = (n + 255) / 256;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = stream;
  config.attrs = nullptr;
  config.numAttrs = 0;
  CU_CHECK(cuLaunchKernelEx(&config, f, params, nullptr));
}

int main(int argc, char** argv) {
  const char* usage = "[--launches N] [--elements E]";
  int launches = 100;
  int n = 4096;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc) {
      launches = static_cast<int>(examples::ParsePositive(argv[++i], "--launches"));
    } else if (std::strcmp(argv[i], "--elements") == 0 && i + 1 < argc) {
      n = static_cast<int>(examples::ParsePositive(argv[++i], "--elements"));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  if (2.0 * launches >= (1 << 23)) examples::DieUsage(argv[0], usage);  // keeps sums exact
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "driver_launch";

  // The runtime makes the primary context current; the driver calls below use it.
  CUDA_CHECK(cudaFree(nullptr));
  cudaFunction_t runtime_function = nullptr;
  CUDA_CHECK(cudaGetFuncBySymbol(&runtime_function, reinterpret_cast<const void*>(axpy_kernel)));
  CUfunction function = reinterpret_cast<CUfunction>(runtime_function);
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  const size_t bytes = n * sizeof(float);
  CUdeviceptr x = 0, y = 0;
  CU_CHECK(cuMemAlloc(&x, bytes));
  CU_CHECK(cuMemAlloc(&y, bytes));
  std::vector<float> ones(n, 1.0f);
  CU_CHECK(cuMemcpyHtoD(x, ones.data(), bytes));
  summary.memcpy_bytes += static_cast<long long>(bytes);
  CU_CHECK(cuMemsetD32(y, 0, n));
  summary.memset_bytes += static_cast<long long>(bytes);
  // The copy and the set ran on the NULL stream, which a non-blocking stream does not wait for.
  CU_CHECK(cuCtxSynchronize());

  // Every launch adds 1 (a = 1, x = 1) to each element of y.
  for (int i = 0; i < launches; ++i) {
    launch_with_cuLaunchKernel(function, stream, y, x, 1.0f, n);
    launch_with_cuLaunchKernelEx(function, stream, y, x, 1.0f, n);
    summary.kernels += 2;
  }
  CU_CHECK(cuStreamSynchronize(stream));

  std::vector<float> result(n);
  CU_CHECK(cuMemcpyDtoH(result.data(), y, bytes));
  summary.memcpy_bytes += static_cast<long long>(bytes);
  const float want = static_cast<float>(summary.kernels);
  for (int i = 0; i < n; ++i) {
    if (result[i] != want) {
      std::fprintf(stderr, "y[%d] = %g, expected %g\n", i, result[i], want);
      examples::DieWrong("driver-API launches");
    }
  }
  CU_CHECK(cuMemFree(x));
  CU_CHECK(cuMemFree(y));
  CU_CHECK(cuStreamDestroy(stream));
  summary.wall_ms = timer.ElapsedMs();
  examples::PrintSummary(summary);
  return 0;
}
