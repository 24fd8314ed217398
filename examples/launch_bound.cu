// The launch-bound benchmark: nothing but empty kernel launches, so the per-launch cost of a
// profiler is all there is to see. Prints microseconds per launch, measured on the host clock
// around the launch loop plus the final synchronization.
//
// usage: launch_bound [--launches N] [--threads T] [--seconds S] [--graph-nodes K]
//   --launches N     kernels per thread (default 200000)
//   --threads T      launching threads, each on its own stream (default 1: the legacy stream)
//   --seconds S      launch for S seconds instead of a fixed count (the soak test)
//   --graph-nodes K  launch a CUDA graph of K empty kernels instead of single kernels; every
//                    graph launch counts K kernels
#include <atomic>
#include <thread>
#include <vector>

#include "common.h"

__global__ void empty_kernel() {}

namespace {

struct Options {
  long launches = 200000;
  int threads = 1;
  double seconds = 0;  // > 0: duration mode
  int graph_nodes = 0;
};

struct ThreadResult {
  long long kernels = 0;
  long long graph_launches = 0;
};

// How often duration mode looks at the clock (a clock read per launch would be measurable).
constexpr long kClockCheckInterval = 1024;

__attribute__((noinline)) void launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
}

__attribute__((noinline)) cudaGraphExec_t build_empty_graph(cudaStream_t stream, int nodes) {
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < nodes; ++i) launch_empty(stream);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// One thread's launch loop. Stops after `opts.launches` kernels, or in duration mode when
// `deadline` passes. Launch errors are sticky in the runtime, so one check after the loop
// catches them without adding a runtime API call per launch.
__attribute__((noinline)) ThreadResult launch_loop(const Options& opts, cudaStream_t stream,
                                                   cudaGraphExec_t graph,
                                                   std::chrono::steady_clock::time_point deadline) {
  ThreadResult result;
  const bool timed = opts.seconds > 0;
  const long per_step = graph ? opts.graph_nodes : 1;
  for (long step = 0;; ++step) {
    if (timed) {
      if (step % kClockCheckInterval == 0 && std::chrono::steady_clock::now() >= deadline) break;
    } else if (result.kernels >= opts.launches) {
      break;
    }
    if (graph) {
      CUDA_CHECK(cudaGraphLaunch(graph, stream));
      ++result.graph_launches;
    } else {
      launch_empty(stream);
    }
    result.kernels += per_step;
  }
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

Options ParseOptions(int argc, char** argv) {
  const char* usage = "[--launches N] [--threads T] [--seconds S] [--graph-nodes K]";
  Options opts;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc) {
      opts.launches = examples::ParsePositive(argv[++i], "--launches");
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      opts.threads = static_cast<int>(examples::ParsePositive(argv[++i], "--threads"));
    } else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      opts.seconds = static_cast<double>(examples::ParsePositive(argv[++i], "--seconds"));
    } else if (std::strcmp(argv[i], "--graph-nodes") == 0 && i + 1 < argc) {
      opts.graph_nodes = static_cast<int>(examples::ParsePositive(argv[++i], "--graph-nodes"));
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  if (opts.graph_nodes > 0 && opts.launches % opts.graph_nodes != 0) {
    std::fprintf(stderr, "--launches must be a multiple of --graph-nodes\n");
    std::exit(examples::kExitUsage);
  }
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = ParseOptions(argc, argv);
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "launch_bound";

  // Streams, graphs and one warm-up launch per stream before the clock starts, so the loop
  // measures launches only (not context creation or module loading).
  const bool legacy_stream = opts.threads == 1 && opts.graph_nodes == 0;
  std::vector<cudaStream_t> streams(opts.threads, nullptr);
  std::vector<cudaGraphExec_t> graphs(opts.threads, nullptr);
  for (int t = 0; t < opts.threads; ++t) {
    if (!legacy_stream) CUDA_CHECK(cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking));
    if (opts.graph_nodes > 0) graphs[t] = build_empty_graph(streams[t], opts.graph_nodes);
    launch_empty(streams[t]);
    CUDA_CHECK_LAUNCH();
    ++summary.kernels;
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<ThreadResult> results(opts.threads);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(opts.seconds));
  if (opts.threads == 1) {
    results[0] = launch_loop(opts, streams[0], graphs[0], deadline);
  } else {
    std::vector<std::thread> workers;
    for (int t = 0; t < opts.threads; ++t) {
      workers.emplace_back(
          [&, t] { results[t] = launch_loop(opts, streams[t], graphs[t], deadline); });
    }
    for (std::thread& worker : workers) worker.join();
  }
  const double loop_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();

  long long loop_kernels = 0;
  for (const ThreadResult& r : results) {
    loop_kernels += r.kernels;
    summary.graph_launches += r.graph_launches;
    if (opts.graph_nodes > 0) summary.graph_kernels += r.kernels;
  }
  if (opts.seconds == 0 && loop_kernels != opts.launches * opts.threads) {
    examples::DieWrong("launch count");
  }
  summary.kernels += loop_kernels;

  for (int t = 0; t < opts.threads; ++t) {
    if (graphs[t]) CUDA_CHECK(cudaGraphExecDestroy(graphs[t]));
    if (streams[t]) CUDA_CHECK(cudaStreamDestroy(streams[t]));
  }

  summary.wall_ms = timer.ElapsedMs();
  summary.AddExtra("us_per_launch", loop_us / static_cast<double>(loop_kernels));
  summary.AddExtra("launches_per_s", static_cast<long long>(loop_kernels / (loop_us * 1e-6)));
  summary.AddExtra("loop_kernels", loop_kernels);
  summary.AddExtra("threads", static_cast<long long>(opts.threads));
  examples::PrintSummary(summary);
  return 0;
}
