// One of every kind of copy and set, each small and each checked: host<->device from pageable
// and pinned memory, device to device, host to host, async copies on a stream, a copy to a
// __constant__ symbol, cudaMemcpyDefault, memset sync and async, managed memory touched on
// the host and on the device, and a peer copy when there are two devices that can reach
// each other.
//
// The summary line adds bytes per direction after wall_ms (htod_bytes, dtoh_bytes,
// dtod_bytes, htoh_bytes, peer_bytes), because a profiler may not see every kind (a
// host-to-host copy may never reach the GPU).
//
// usage: memcpy_kinds [--elements N]
#include <algorithm>
#include <vector>

#include "common.h"

namespace {

constexpr int kConstantFloats = 64;

}  // namespace

__constant__ float g_constant_table[kConstantFloats];

__global__ void increment_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void read_constant_kernel(float* out) {
  int i = threadIdx.x;
  if (i < kConstantFloats) out[i] = g_constant_table[i] * 2.0f;
}

namespace {

struct Bytes {
  long long htod = 0, dtoh = 0, dtod = 0, htoh = 0, peer = 0, memset = 0;
  long long Total() const { return htod + dtoh + dtod + htoh + peer; }
};

Bytes g_bytes;
long long g_kernels = 0;

void Copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, long long& counter) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
  counter += static_cast<long long>(bytes);
}

void Expect(const float* got, const float* want, int n, const char* what) {
  if (!examples::AllClose(got, want, n, 0.0f, 0.0f, what)) examples::DieWrong(what);
}

void ExpectFilled(const float* got, int n, float value, const char* what) {
  std::vector<float> want(n, value);
  Expect(got, want.data(), n, what);
}

void Increment(float* x, int n, cudaStream_t stream) {
  increment_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  CUDA_CHECK_LAUNCH();
  ++g_kernels;
}

}  // namespace

__attribute__((noinline)) void pageable_copies(const std::vector<float>& src, float* device,
                                               int n) {
  const size_t bytes = n * sizeof(float);
  std::vector<float> back(n, -1.0f);
  Copy(device, src.data(), bytes, cudaMemcpyHostToDevice, g_bytes.htod);
  Copy(back.data(), device, bytes, cudaMemcpyDeviceToHost, g_bytes.dtoh);
  Expect(back.data(), src.data(), n, "pageable round trip");
}

__attribute__((noinline)) void pinned_copies(const float* pinned_src, float* pinned_dst,
                                             float* device, int n) {
  const size_t bytes = n * sizeof(float);
  Copy(device, pinned_src, bytes, cudaMemcpyHostToDevice, g_bytes.htod);
  Copy(pinned_dst, device, bytes, cudaMemcpyDeviceToHost, g_bytes.dtoh);
  Expect(pinned_dst, pinned_src, n, "pinned round trip");
  // cudaMemcpyDefault: the direction comes from the pointers (unified addressing).
  Copy(device, pinned_src, bytes, cudaMemcpyDefault, g_bytes.htod);
  Copy(pinned_dst, device, bytes, cudaMemcpyDefault, g_bytes.dtoh);
  Expect(pinned_dst, pinned_src, n, "cudaMemcpyDefault round trip");
}

__attribute__((noinline)) void device_and_host_copies(const float* pinned_src, float* pinned_dst,
                                                      float* device_a, float* device_b, int n) {
  const size_t bytes = n * sizeof(float);
  Copy(device_a, pinned_src, bytes, cudaMemcpyHostToDevice, g_bytes.htod);
  Copy(device_b, device_a, bytes, cudaMemcpyDeviceToDevice, g_bytes.dtod);
  Copy(pinned_dst, device_b, bytes, cudaMemcpyDeviceToHost, g_bytes.dtoh);
  Expect(pinned_dst, pinned_src, n, "device-to-device copy");
  std::fill(pinned_dst, pinned_dst + n, -1.0f);
  Copy(pinned_dst, pinned_src, bytes, cudaMemcpyHostToHost, g_bytes.htoh);
  Expect(pinned_dst, pinned_src, n, "host-to-host copy");
}

__attribute__((noinline)) void async_copies(const float* pinned_src, float* pinned_dst,
                                            float* device, int n, cudaStream_t stream) {
  const size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaMemcpyAsync(device, pinned_src, bytes, cudaMemcpyHostToDevice, stream));
  g_bytes.htod += static_cast<long long>(bytes);
  Increment(device, n, stream);
  CUDA_CHECK(cudaMemcpyAsync(pinned_dst, device, bytes, cudaMemcpyDeviceToHost, stream));
  g_bytes.dtoh += static_cast<long long>(bytes);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> want(pinned_src, pinned_src + n);
  for (float& v : want) v += 1.0f;
  Expect(pinned_dst, want.data(), n, "async copy and increment");
}

__attribute__((noinline)) void memsets(float* pinned_dst, float* device, int n,
                                       cudaStream_t stream) {
  const size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaMemset(device, 0, bytes));
  g_bytes.memset += static_cast<long long>(bytes);
  Copy(pinned_dst, device, bytes, cudaMemcpyDeviceToHost, g_bytes.dtoh);
  ExpectFilled(pinned_dst, n, 0.0f, "cudaMemset");
  // Memset writes bytes: 0x7f in every byte reads back as the float with bits 0x7f7f7f7f.
  CUDA_CHECK(cudaMemsetAsync(device, 0x7f, bytes, stream));
  g_bytes.memset += static_cast<long long>(bytes);
  CUDA_CHECK(cudaMemcpyAsync(pinned_dst, device, bytes, cudaMemcpyDeviceToHost, stream));
  g_bytes.dtoh += static_cast<long long>(bytes);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  float pattern;
  const uint32_t bits = 0x7f7f7f7fu;
  std::memcpy(&pattern, &bits, sizeof(pattern));
  ExpectFilled(pinned_dst, n, pattern, "cudaMemsetAsync");
}

__attribute__((noinline)) void constant_memory_copy(float* device) {
  float table[kConstantFloats];
  for (int i = 0; i < kConstantFloats; ++i) table[i] = static_cast<float>(i);
  CUDA_CHECK(cudaMemcpyToSymbol(g_constant_table, table, sizeof(table)));
  g_bytes.htod += sizeof(table);
  read_constant_kernel<<<1, kConstantFloats>>>(device);
  CUDA_CHECK_LAUNCH();
  ++g_kernels;
  float doubled[kConstantFloats];
  Copy(doubled, device, sizeof(doubled), cudaMemcpyDeviceToHost, g_bytes.dtoh);
  for (float& v : table) v *= 2.0f;
  Expect(doubled, table, kConstantFloats, "constant memory");
}

// Managed memory moves by page migration (not memcpy records): touch it on the host, then on
// the device, then on the host again.
__attribute__((noinline)) void managed_memory(int n) {
  float* managed = nullptr;
  CUDA_CHECK(cudaMallocManaged(&managed, n * sizeof(float)));
  for (int i = 0; i < n; ++i) managed[i] = static_cast<float>(i % 1000);
  Increment(managed, n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    if (managed[i] != static_cast<float>(i % 1000) + 1.0f) examples::DieWrong("managed memory");
  }
  CUDA_CHECK(cudaFree(managed));
}

// Copies device 0 -> device 1 when both exist and can reach each other; returns whether it ran.
__attribute__((noinline)) bool peer_copy(const float* pinned_src, float* pinned_dst, float* device0,
                                         int n) {
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 2) return false;
  int can_access = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, 1, 0));
  if (!can_access) return false;
  const size_t bytes = n * sizeof(float);
  float* device1 = nullptr;
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaMalloc(&device1, bytes));
  CUDA_CHECK(cudaSetDevice(0));
  Copy(device0, pinned_src, bytes, cudaMemcpyHostToDevice, g_bytes.htod);
  CUDA_CHECK(cudaMemcpyPeer(device1, 1, device0, 0, bytes));
  g_bytes.peer += static_cast<long long>(bytes);
  CUDA_CHECK(cudaDeviceSynchronize());  // cudaMemcpyPeer is asynchronous to the host
  Copy(pinned_dst, device1, bytes, cudaMemcpyDeviceToHost, g_bytes.dtoh);
  Expect(pinned_dst, pinned_src, n, "peer copy");
  CUDA_CHECK(cudaFree(device1));
  return true;
}

int main(int argc, char** argv) {
  const char* usage = "[--elements N]";
  int n = 16384;  // 64 KiB per buffer
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--elements") == 0 && i + 1 < argc) {
      n = static_cast<int>(examples::ParsePositive(argv[++i], "--elements"));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  n = std::max(n, kConstantFloats);
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "memcpy_kinds";

  const size_t bytes = n * sizeof(float);
  std::vector<float> pageable(n);
  examples::Lcg rng(3);
  for (float& v : pageable) v = rng.Uniform(100.0f);
  float *pinned_src = nullptr, *pinned_dst = nullptr, *device_a = nullptr, *device_b = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned_src, bytes));
  CUDA_CHECK(cudaMallocHost(&pinned_dst, bytes));
  CUDA_CHECK(cudaMalloc(&device_a, bytes));
  CUDA_CHECK(cudaMalloc(&device_b, bytes));
  std::copy(pageable.begin(), pageable.end(), pinned_src);
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  pageable_copies(pageable, device_a, n);
  pinned_copies(pinned_src, pinned_dst, device_a, n);
  device_and_host_copies(pinned_src, pinned_dst, device_a, device_b, n);
  async_copies(pinned_src, pinned_dst, device_a, n, stream);
  memsets(pinned_dst, device_b, n, stream);
  constant_memory_copy(device_a);
  managed_memory(n);
  const bool peer = peer_copy(pinned_src, pinned_dst, device_a, n);

  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFreeHost(pinned_src));
  CUDA_CHECK(cudaFreeHost(pinned_dst));
  CUDA_CHECK(cudaFree(device_a));
  CUDA_CHECK(cudaFree(device_b));

  summary.kernels = g_kernels;
  summary.memcpy_bytes = g_bytes.Total();
  summary.memset_bytes = g_bytes.memset;
  summary.wall_ms = timer.ElapsedMs();
  summary.AddExtra("htod_bytes", g_bytes.htod);
  summary.AddExtra("dtoh_bytes", g_bytes.dtoh);
  summary.AddExtra("dtod_bytes", g_bytes.dtod);
  summary.AddExtra("htoh_bytes", g_bytes.htoh);
  summary.AddExtra("peer_bytes", g_bytes.peer);
  summary.AddExtra("peer_copy_ran", static_cast<long long>(peer));
  examples::PrintSummary(summary);
  return 0;
}
