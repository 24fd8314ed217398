// CUDA graphs, built both ways: one by stream capture (a chain of 4 kernels) and one with the
// explicit graph API (a diamond of 4 kernel nodes: one, then two in parallel on the two
// halves of the buffer, then one). Each graph adds 4 to every element per launch, so the
// result after G1 + G2 launches is known exactly.
//
// Kernel counts: kernels launched while capturing are not run, so they are not counted; every
// graph launch runs its 4 kernel nodes (graph_kernels = 4 x graph_launches).
//
// usage: cuda_graph [--captured-launches G1] [--explicit-launches G2] [--elements N]
#include <vector>

#include "common.h"

__global__ void fill_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<float>(i % 100);
}

__global__ void add_kernel(float* x, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += value;
}

namespace {

constexpr int kNodesPerGraph = 4;

int Blocks(int n) {
  return (n + 255) / 256;
}

}  // namespace

// add 1, add 1, add 1, add 1 captured from a stream.
__attribute__((noinline)) cudaGraphExec_t build_captured_graph(cudaStream_t stream, float* x,
                                                               int n) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kNodesPerGraph; ++i) {
    add_kernel<<<Blocks(n), 256, 0, stream>>>(x, 1.0f, n);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  if (nodes != kNodesPerGraph) examples::DieWrong("captured graph node count");
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

namespace {

cudaGraphNode_t AddNode(cudaGraph_t graph, const cudaGraphNode_t* deps, size_t num_deps, float* x,
                        float value, int n) {
  void* args[] = {&x, &value, &n};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(add_kernel);
  params.gridDim = dim3(Blocks(n));
  params.blockDim = dim3(256);
  params.sharedMemBytes = 0;
  params.kernelParams = args;
  params.extra = nullptr;
  cudaGraphNode_t node = nullptr;
  CUDA_CHECK(cudaGraphAddKernelNode(&node, graph, deps, num_deps, &params));
  return node;
}

}  // namespace

// add 1 to all; add 2 to each half in parallel; add 1 to all.
__attribute__((noinline)) cudaGraphExec_t build_explicit_graph(float* x, int n) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  const int half = n / 2;
  cudaGraphNode_t first = AddNode(graph, nullptr, 0, x, 1.0f, n);
  cudaGraphNode_t left = AddNode(graph, &first, 1, x, 2.0f, half);
  cudaGraphNode_t right = AddNode(graph, &first, 1, x + half, 2.0f, n - half);
  cudaGraphNode_t joins[] = {left, right};
  AddNode(graph, joins, 2, x, 1.0f, n);
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

int main(int argc, char** argv) {
  const char* usage = "[--captured-launches G1] [--explicit-launches G2] [--elements N]";
  int captured_launches = 100;
  int explicit_launches = 100;
  int n = 1 << 16;
  for (int i = 1; i < argc; ++i) {
    const char* option = argv[i];
    if (std::strcmp(option, "--captured-launches") == 0 && i + 1 < argc) {
      captured_launches = static_cast<int>(examples::ParsePositive(argv[++i], option));
    } else if (std::strcmp(option, "--explicit-launches") == 0 && i + 1 < argc) {
      explicit_launches = static_cast<int>(examples::ParsePositive(argv[++i], option));
    } else if (std::strcmp(option, "--elements") == 0 && i + 1 < argc) {
      n = static_cast<int>(examples::ParsePositive(argv[++i], option));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  // Results stay exact integers in float only below 2^24.
  if (n < 2 || 100.0 + 4.0 * (captured_launches + explicit_launches) >= (1 << 24)) {
    examples::DieUsage(argv[0], usage);
  }
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "cuda_graph";

  float* x = nullptr;
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  fill_kernel<<<Blocks(n), 256, 0, stream>>>(x, n);
  CUDA_CHECK_LAUNCH();
  ++summary.kernels;

  cudaGraphExec_t captured = build_captured_graph(stream, x, n);
  cudaGraphExec_t explicit_graph = build_explicit_graph(x, n);
  for (int i = 0; i < captured_launches; ++i) CUDA_CHECK(cudaGraphLaunch(captured, stream));
  for (int i = 0; i < explicit_launches; ++i) CUDA_CHECK(cudaGraphLaunch(explicit_graph, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  summary.graph_launches = captured_launches + explicit_launches;
  summary.graph_kernels = kNodesPerGraph * summary.graph_launches;
  summary.kernels += summary.graph_kernels;

  std::vector<float> result(n);
  CUDA_CHECK(cudaMemcpy(result.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
  summary.memcpy_bytes += static_cast<long long>(n) * sizeof(float);
  const float added = 4.0f * static_cast<float>(summary.graph_launches);
  for (int i = 0; i < n; ++i) {
    const float want = static_cast<float>(i % 100) + added;
    if (result[i] != want) {
      std::fprintf(stderr, "x[%d] = %g, expected %g\n", i, result[i], want);
      examples::DieWrong("graph result");
    }
  }

  CUDA_CHECK(cudaGraphExecDestroy(captured));
  CUDA_CHECK(cudaGraphExecDestroy(explicit_graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(x));
  summary.wall_ms = timer.ElapsedMs();
  examples::PrintSummary(summary);
  return 0;
}
