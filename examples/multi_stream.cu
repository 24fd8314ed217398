// Several host threads, each driving several streams: per batch, every stream copies its
// chunk in (pinned, async), runs two kernels on it and copies it back; the thread then waits
// for its streams and checks every element; before that, its first stream waits for an event
// on its last (cudaStreamWaitEvent: a dependency between streams, which the CPU does not wait
// for). Exercises per-thread stacks, concurrent kernels, stream ids and stream waits.
//
// NVTX ranges: one "worker" range per thread around its loop, one "batch" range per batch.
//
// usage: multi_stream [--threads T] [--streams S] [--batches B] [--elements N]
#include <nvtx3/nvToolsExt.h>

#include <thread>
#include <vector>

#include "common.h"

__global__ void scale_kernel(float* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

__global__ void offset_kernel(float* x, float offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += offset;
}

namespace {

struct Options {
  int threads = 4;
  int streams = 4;
  int batches = 50;
  int elements = 16384;
};

struct Counts {
  long long kernels = 0;
  long long memcpy_bytes = 0;
  long long nvtx_ranges = 0;
};

// Per-stream buffers: pinned host memory (so the copies are truly async) and device memory.
struct Lane {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;  // recorded after the lane's chunk
  float* host = nullptr;
  float* device = nullptr;
};

}  // namespace

__attribute__((noinline)) void enqueue_chunk(Lane& lane, int n, Counts& counts) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  CUDA_CHECK(cudaMemcpyAsync(lane.device, lane.host, bytes, cudaMemcpyHostToDevice, lane.stream));
  const int blocks = (n + 255) / 256;
  scale_kernel<<<blocks, 256, 0, lane.stream>>>(lane.device, 2.0f, n);
  CUDA_CHECK_LAUNCH();
  offset_kernel<<<blocks, 256, 0, lane.stream>>>(lane.device, 1.0f, n);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(lane.host, lane.device, bytes, cudaMemcpyDeviceToHost, lane.stream));
  counts.kernels += 2;
  counts.memcpy_bytes += 2 * static_cast<long long>(bytes);
}

// Fills each lane with small integers (so 2x+1 is exact in float), runs the batch, checks it.
__attribute__((noinline)) void process_batch(std::vector<Lane>& lanes, int thread, int batch, int n,
                                             Counts& counts) {
  for (size_t s = 0; s < lanes.size(); ++s) {
    for (int i = 0; i < n; ++i) {
      lanes[s].host[i] =
          static_cast<float>((i + thread * 7 + batch * 3 + static_cast<int>(s)) % 1000);
    }
  }
  for (Lane& lane : lanes) enqueue_chunk(lane, n, counts);
  CUDA_CHECK(cudaEventRecord(lanes.back().done, lanes.back().stream));
  CUDA_CHECK(cudaStreamWaitEvent(lanes.front().stream, lanes.back().done, 0));
  for (Lane& lane : lanes) CUDA_CHECK(cudaStreamSynchronize(lane.stream));
  for (size_t s = 0; s < lanes.size(); ++s) {
    for (int i = 0; i < n; ++i) {
      const float in =
          static_cast<float>((i + thread * 7 + batch * 3 + static_cast<int>(s)) % 1000);
      if (lanes[s].host[i] != 2.0f * in + 1.0f) {
        std::fprintf(stderr, "thread %d batch %d stream %zu element %d: %g, expected %g\n", thread,
                     batch, s, i, lanes[s].host[i], 2.0f * in + 1.0f);
        examples::DieWrong("multi-stream batch");
      }
    }
  }
}

__attribute__((noinline)) void worker_thread(const Options& opts, int thread, Counts& counts) {
  nvtxRangePushA("worker");
  std::vector<Lane> lanes(opts.streams);
  const size_t bytes = static_cast<size_t>(opts.elements) * sizeof(float);
  for (Lane& lane : lanes) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&lane.done, cudaEventDisableTiming));
    CUDA_CHECK(cudaMallocHost(&lane.host, bytes));
    CUDA_CHECK(cudaMalloc(&lane.device, bytes));
  }
  for (int batch = 0; batch < opts.batches; ++batch) {
    nvtxRangePushA("batch");
    process_batch(lanes, thread, batch, opts.elements, counts);
    nvtxRangePop();
    ++counts.nvtx_ranges;
  }
  for (Lane& lane : lanes) {
    CUDA_CHECK(cudaStreamDestroy(lane.stream));
    CUDA_CHECK(cudaEventDestroy(lane.done));
    CUDA_CHECK(cudaFreeHost(lane.host));
    CUDA_CHECK(cudaFree(lane.device));
  }
  nvtxRangePop();
  ++counts.nvtx_ranges;
}

int main(int argc, char** argv) {
  const char* usage = "[--threads T] [--streams S] [--batches B] [--elements N]";
  Options opts;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      opts.threads = static_cast<int>(examples::ParsePositive(argv[++i], "--threads"));
    } else if (std::strcmp(argv[i], "--streams") == 0 && i + 1 < argc) {
      opts.streams = static_cast<int>(examples::ParsePositive(argv[++i], "--streams"));
    } else if (std::strcmp(argv[i], "--batches") == 0 && i + 1 < argc) {
      opts.batches = static_cast<int>(examples::ParsePositive(argv[++i], "--batches"));
    } else if (std::strcmp(argv[i], "--elements") == 0 && i + 1 < argc) {
      opts.elements = static_cast<int>(examples::ParsePositive(argv[++i], "--elements"));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "multi_stream";

  // Create the context on the main thread, so the workers race on launches, not on init.
  CUDA_CHECK(cudaFree(nullptr));
  std::vector<Counts> counts(opts.threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < opts.threads; ++t) {
    workers.emplace_back(worker_thread, std::cref(opts), t, std::ref(counts[t]));
  }
  for (std::thread& worker : workers) worker.join();
  for (const Counts& c : counts) {
    summary.kernels += c.kernels;
    summary.memcpy_bytes += c.memcpy_bytes;
    summary.nvtx_ranges += c.nvtx_ranges;
  }
  summary.wall_ms = timer.ElapsedMs();
  examples::PrintSummary(summary);
  return 0;
}
