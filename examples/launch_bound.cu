// The launch-bound benchmark: nothing but empty kernel launches, so the per-launch cost of a
// profiler is all there is to see. Prints microseconds per launch, measured on the host clock
// around the launch loop plus the final synchronization (us_per_launch), and the median over
// batches of 1024 launches (us_per_launch_p50): the steady-state cost, which moments when
// the thread was not running (a busy VM host) do not skew, and the launching threads' CPU
// time per launch (cpu_us_per_launch).
//
// usage: launch_bound [--launches N] [--threads T] [--streams S] [--seconds S] [--graph-nodes K]
//                     [--ab FN]
//   --launches N     kernels per thread (default 200000)
//   --threads T      launching threads, each on its own stream (default 1: the legacy stream)
//   --streams S      streams per thread, launched to in turn (default 1)
//   --seconds S      launch for S seconds instead of a fixed count (the soak test)
//   --graph-nodes K  launch a CUDA graph of K empty kernels instead of single kernels; every
//                    graph launch counts K kernels
//   --ab FN          paired measurement of a profiler's cost inside one process: FN is a
//                    `void FN(int on)` exported by the library in CUDA_INJECTION64_PATH
//                    (gpuperf: gpuperf_bench_toggle); batches alternate FN(1) and FN(0) and
//                    the summary gets ab_on_us / ab_off_us (median batch, µs per launch) and
//                    ab_added_us, their difference. Alternating every few milliseconds cancels
//                    the drifts that make separate runs differ by more than the effect.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "common.h"

__global__ void empty_kernel() {}

namespace {

struct Options {
  long launches = 200000;
  int threads = 1;
  int streams = 1;     // per thread
  double seconds = 0;  // > 0: duration mode
  int graph_nodes = 0;
  const char* ab_function = nullptr;
};

using ToggleFn = void (*)(int on);

struct ThreadResult {
  long long kernels = 0;
  long long graph_launches = 0;
  std::vector<double> batch_us;       // one entry per kClockCheckInterval steps
  double cpu_us = 0;                  // the thread's CPU time in the loop
  std::vector<double> on_us, off_us;  // --ab: batches with the profiler on / off
};

double ThreadCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

// How often the loop looks at the clock (a clock read per launch would be measurable).
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
__attribute__((noinline)) ThreadResult launch_loop(const Options& opts,
                                                   const std::vector<cudaStream_t>& streams,
                                                   cudaGraphExec_t graph,
                                                   std::chrono::steady_clock::time_point deadline,
                                                   ToggleFn toggle = nullptr) {
  ThreadResult result;
  const bool timed = opts.seconds > 0;
  const long per_step = graph ? opts.graph_nodes : 1;
  result.batch_us.reserve(static_cast<size_t>(opts.launches / kClockCheckInterval + 1));
  const double cpu_start = ThreadCpuUs();
  auto batch_start = std::chrono::steady_clock::now();
  for (long step = 0;; ++step) {
    if (step % kClockCheckInterval == 0) {
      const auto now = std::chrono::steady_clock::now();
      const long batch = step / kClockCheckInterval;  // the batch starting now
      if (step > 0) {
        const double us = std::chrono::duration<double, std::micro>(now - batch_start).count();
        result.batch_us.push_back(us);
        if (toggle != nullptr) ((batch - 1) % 2 == 0 ? result.on_us : result.off_us).push_back(us);
      }
      if (timed && now >= deadline) break;
      if (toggle != nullptr) {
        toggle(batch % 2 == 0 ? 1 : 0);  // outside the timed batch
        batch_start = std::chrono::steady_clock::now();
      } else {
        batch_start = now;
      }
    }
    if (!timed && result.kernels >= opts.launches) break;
    cudaStream_t stream = streams[static_cast<size_t>(step) % streams.size()];
    if (graph) {
      CUDA_CHECK(cudaGraphLaunch(graph, stream));
      ++result.graph_launches;
    } else {
      launch_empty(stream);
    }
    result.kernels += per_step;
  }
  result.cpu_us = ThreadCpuUs() - cpu_start;  // before the synchronization, which may spin
  CUDA_CHECK_LAUNCH();
  for (cudaStream_t stream : streams) CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

Options ParseOptions(int argc, char** argv) {
  const char* usage =
      "[--launches N] [--threads T] [--streams S] [--seconds S] [--graph-nodes K] [--ab FN]";
  Options opts;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc) {
      opts.launches = examples::ParsePositive(argv[++i], "--launches");
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      opts.threads = static_cast<int>(examples::ParsePositive(argv[++i], "--threads"));
    } else if (std::strcmp(argv[i], "--streams") == 0 && i + 1 < argc) {
      opts.streams = static_cast<int>(examples::ParsePositive(argv[++i], "--streams"));
    } else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      opts.seconds = static_cast<double>(examples::ParsePositive(argv[++i], "--seconds"));
    } else if (std::strcmp(argv[i], "--ab") == 0 && i + 1 < argc) {
      opts.ab_function = argv[++i];
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
  if (opts.ab_function != nullptr && (opts.threads != 1 || opts.seconds > 0)) {
    std::fprintf(stderr, "--ab needs one thread and a launch count\n");
    std::exit(examples::kExitUsage);
  }
  return opts;
}

// The profiler's toggle, from the injection library the driver loaded at cuInit.
ToggleFn FindToggle(const char* name) {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  void* library = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
  if (symbol == nullptr) {
    std::fprintf(stderr, "--ab: no function %s in CUDA_INJECTION64_PATH (%s)\n", name,
                 path != nullptr ? path : "not set");
    std::exit(examples::kExitUsage);
  }
  return reinterpret_cast<ToggleFn>(symbol);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  auto middle = values.begin() + static_cast<long>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = ParseOptions(argc, argv);
  examples::WallTimer timer;
  examples::Summary summary;
  summary.name = "launch_bound";

  // Streams, graphs and one warm-up launch per stream before the clock starts, so the loop
  // measures launches only (not context creation or module loading).
  const bool legacy_stream = opts.threads == 1 && opts.streams == 1 && opts.graph_nodes == 0;
  std::vector<std::vector<cudaStream_t>> streams(opts.threads,
                                                 std::vector<cudaStream_t>(opts.streams, nullptr));
  std::vector<cudaGraphExec_t> graphs(opts.threads, nullptr);
  for (int t = 0; t < opts.threads; ++t) {
    for (cudaStream_t& stream : streams[t]) {
      if (!legacy_stream) CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      launch_empty(stream);
      CUDA_CHECK_LAUNCH();
      ++summary.kernels;
    }
    if (opts.graph_nodes > 0) graphs[t] = build_empty_graph(streams[t][0], opts.graph_nodes);
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<ThreadResult> results(opts.threads);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(opts.seconds));
  ToggleFn toggle = opts.ab_function != nullptr ? FindToggle(opts.ab_function) : nullptr;
  if (opts.threads == 1) {
    results[0] = launch_loop(opts, streams[0], graphs[0], deadline, toggle);
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
  std::vector<double> batch_us;
  double cpu_us = 0;
  for (const ThreadResult& r : results) {
    cpu_us += r.cpu_us;
    batch_us.insert(batch_us.end(), r.batch_us.begin(), r.batch_us.end());
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
    for (cudaStream_t stream : streams[t]) {
      if (stream) CUDA_CHECK(cudaStreamDestroy(stream));
    }
  }

  summary.wall_ms = timer.ElapsedMs();
  summary.AddExtra("us_per_launch", loop_us / static_cast<double>(loop_kernels));
  const double per_batch =
      static_cast<double>(kClockCheckInterval * (opts.graph_nodes > 0 ? opts.graph_nodes : 1));
  if (!batch_us.empty()) summary.AddExtra("us_per_launch_p50", Median(batch_us) / per_batch);
  if (toggle != nullptr) {
    const double on = Median(results[0].on_us) / per_batch;
    const double off = Median(results[0].off_us) / per_batch;
    summary.AddExtra("ab_on_us", on);
    summary.AddExtra("ab_off_us", off);
    summary.AddExtra("ab_added_us", on - off);
  }
  summary.AddExtra("cpu_us_per_launch", cpu_us / static_cast<double>(loop_kernels));
  summary.AddExtra("launches_per_s", static_cast<long long>(loop_kernels / (loop_us * 1e-6)));
  summary.AddExtra("loop_kernels", loop_kernels);
  summary.AddExtra("threads", static_cast<long long>(opts.threads));
  summary.AddExtra("streams", static_cast<long long>(opts.streams));
  examples::PrintSummary(summary);
  return 0;
}
