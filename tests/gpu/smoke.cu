// A minimal CUDA program for the first check of the injection library on a GPU:
// runtime launches, a nested driver launch path, copies, a set, an NVTX range.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

__global__ void add_one(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

__attribute__((noinline)) void launch_many(float* d, int n, int count) {
  for (int i = 0; i < count; ++i) add_one<<<(n + 255) / 256, 256>>>(d, n);
}

int main() {
  const int n = 1 << 16;
  float* h = nullptr;
  float* d = nullptr;
  if (cudaMallocHost(&h, n * sizeof(float)) != cudaSuccess) return 1;
  for (int i = 0; i < n; ++i) h[i] = 0;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) return 1;
  nvtxRangePushA("smoke");
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(d, 0, n * sizeof(float));
  launch_many(d, n, 100);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  nvtxRangePop();
  cudaError_t err = cudaDeviceSynchronize();
  const float value = h[0];
  std::printf("smoke: kernels=100 value=%.0f err=%s\n", value, cudaGetErrorString(err));
  cudaFree(d);
  cudaFreeHost(h);
  return value == 100.0f ? 0 : 2;
}
