// What reading the Python frames of a launch costs (budget: 100 ns for 50 frames), at 20
// and 50 frames:
//   Chase/N: following N plain "previous" pointers, the floor any frame walk stands on
//     (one dependent load per frame), consecutive walks overlapped by the CPU;
//   ChaseSerial/N: the same, each walk waiting for the previous one (no overlap);
//   Synthetic/<version>/N: WalkPyFramesOf over N frames laid out as each CPython version
//     lays them out (tests/python/fake_python.h), entry frames every 5;
//   SyntheticWithIntern/<version>/N: the same plus the code ids of the N (known) code
//     objects, through a thread cache as the launch callback does;
//   Real/Walk/N, Real/WalkAndIntern/N: WalkPythonFrames (and InternPythonFrames) on the
//     real interpreter this benchmark embeds (when built with libpython), called with the
//     GIL released from an N-frame-deep Python recursion, as the launch callback would be.
// Each runs 9 times for 0.1 s unless told otherwise (--benchmark_repetitions,
// --benchmark_min_time); the table printed last has the medians of their CPU times, walk
// and walk + intern side by side.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inject/python/python_code_table.h"
#include "inject/python/python_frames.h"
#include "python/fake_python.h"

#ifdef GPUPERF_BENCH_EMBED_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#endif

namespace gpuperf::inject {
namespace {

using testing::FakeCodeSpec;
using testing::FakePython;
using testing::FakeVersion;

constexpr int kDepths[] = {20, 50};

std::unique_ptr<FakePython> FramesOf(FakeVersion version, int depth) {
  auto fake = std::make_unique<FakePython>(version);
  for (int i = 0; i < depth; ++i) {
    FakeCodeSpec spec;
    spec.first_line = 10 * i + 1;
    spec.code_version = uint32_t(i + 1);
    fake->PushFrame(fake->NewCode(spec), uint32_t(i), i % 5 == 0);
  }
  return fake;
}

// A chain of `length` nodes, each a cache line apart from the next; returns its top.
struct ChaseNode {
  ChaseNode* previous;
  uint64_t payload[8];
};
ChaseNode* ChainOf(int64_t length, std::vector<std::unique_ptr<ChaseNode>>& nodes) {
  ChaseNode* top = nullptr;
  for (int64_t i = 0; i < length; ++i) {
    nodes.push_back(std::make_unique<ChaseNode>());
    nodes.back()->previous = top;
    top = nodes.back().get();
  }
  return top;
}

void Chase(benchmark::State& state) {
  std::vector<std::unique_ptr<ChaseNode>> nodes;
  ChaseNode* top = ChainOf(state.range(0), nodes);
  for (auto _ : state) {
    int n = 0;
    for (ChaseNode* node = top; node != nullptr; node = node->previous) ++n;
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(Chase)->Arg(20)->Arg(50);

// Chase, each walk starting from a pointer that depends on the previous walk's end (through
// a zero the compiler cannot see): a walk cannot begin before the last one ended. Chase's
// walks are independent, and the CPU overlaps consecutive ones (on the CI VM a link of Chase
// costs about 2 cycles, one of ChaseSerial about 5, the first-level cache's latency): this is
// the cost of N dependent loads one after the other, the floor of a walk that the CPU cannot
// overlap with the work around it.
void ChaseSerial(benchmark::State& state) {
  std::vector<std::unique_ptr<ChaseNode>> nodes;
  ChaseNode* top = ChainOf(state.range(0), nodes);
  uintptr_t last = 0;  // the previous walk's last node
  for (auto _ : state) {
    const uintptr_t zero = last >> 63;  // 0 for a user-space address, which only we know
    ChaseNode* node = reinterpret_cast<ChaseNode*>(reinterpret_cast<uintptr_t>(top) + zero);
    for (ChaseNode* next = node->previous; next != nullptr; next = next->previous) node = next;
    last = reinterpret_cast<uintptr_t>(node);
  }
  benchmark::DoNotOptimize(last);
}
BENCHMARK(ChaseSerial)->Arg(20)->Arg(50);

void WalkSynthetic(benchmark::State& state, FakeVersion version, bool intern) {
  auto fake = FramesOf(version, int(state.range(0)));
  PyCodeTable table;
  auto cache = std::make_unique<PyCodeCache>();
  PyFrameSample samples[kMaxPythonFrames];
  uint32_t ids[kMaxPythonFrames];
  int frames = 0;
  for (auto _ : state) {
    frames = WalkPyFramesOf(fake->view(), fake->thread_state(), samples, kMaxPythonFrames).frames;
    if (intern) table.InternAll(fake->view(), samples, frames, ids, *cache);
    benchmark::DoNotOptimize(samples);
    benchmark::DoNotOptimize(ids);
  }
  state.counters["frames"] = frames;
  // Looks that missed the thread cache, per iteration: 0 once warm.
  if (intern) state.counters["misses"] = double(table.cache_misses()) / double(state.iterations());
}

void Synthetic(benchmark::State& state, FakeVersion version) {
  WalkSynthetic(state, version, false);
}

void SyntheticWithIntern(benchmark::State& state, FakeVersion version) {
  WalkSynthetic(state, version, true);
}

#define GP_SYNTHETIC(version, name)                                           \
  BENCHMARK_CAPTURE(Synthetic, name, FakeVersion::version)->Arg(20)->Arg(50); \
  BENCHMARK_CAPTURE(SyntheticWithIntern, name, FakeVersion::version)->Arg(20)->Arg(50);
GP_SYNTHETIC(k310, py310)
GP_SYNTHETIC(k311, py311)
GP_SYNTHETIC(k312, py312)
GP_SYNTHETIC(k313, py313)
GP_SYNTHETIC(k314, py314)
#undef GP_SYNTHETIC

// Prints what the console reporter prints, and keeps each benchmark's median CPU time for
// the table printed last.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      // A single run stands for its own median.
      if (run.aggregate_name == "median" || (run.repetitions <= 1 && run.aggregate_name.empty())) {
        medians_[run.run_name.function_name + "/" + run.run_name.args] = run.GetAdjustedCPUTime();
      }
    }
  }

  // One row per layout and depth: walk, walk + intern, and their difference.
  void PrintTable() const {
    std::fflush(stdout);  // after what the reporter printed
    GetOutputStream().flush();
    std::printf(
        "\nPython frames per launch, median CPU ns (walk: WalkPyFramesOf or "
        "WalkPythonFrames; intern: the code ids after it):\n");
    std::printf("  %-12s %6s %8s %12s %8s\n", "layout", "frames", "walk", "walk+intern", "intern");
    for (const auto& [name, walk] : medians_) {
      const size_t slash = name.rfind('/');
      const std::string frames = name.substr(slash + 1), family = name.substr(0, slash);
      std::string layout, with_intern;
      if (family.rfind("Synthetic/", 0) == 0) {
        layout = family.substr(10);
        with_intern = "SyntheticWithIntern/" + layout + "/" + frames;
      } else if (family == "Real/Walk") {
        const uint32_t version = PythonFramesVersion();
        layout =
            "real " + std::to_string(version >> 24) + "." + std::to_string((version >> 16) & 0xff);
        with_intern = "Real/WalkAndIntern/" + frames;
      } else if (family == "Chase") {
        layout = "chase floor";
      } else if (family == "ChaseSerial") {
        layout = "chase serial";
      } else {
        continue;
      }
      auto both = medians_.find(with_intern);
      if (both == medians_.end()) {
        std::printf("  %-12s %6s %8.1f\n", layout.c_str(), frames.c_str(), walk);
      } else {
        std::printf("  %-12s %6s %8.1f %12.1f %8.1f\n", layout.c_str(), frames.c_str(), walk,
                    both->second, both->second - walk);
      }
    }
  }

 private:
  std::map<std::string, double> medians_;
};

MedianReporter* g_reporter = nullptr;

#ifdef GPUPERF_BENCH_EMBED_PYTHON
// Runs inside Python, at the bottom of a recursion (see RunReal); the GIL is released.
void Real(benchmark::State& state, bool intern) {
  if (GetPythonFramesState() != PythonFramesState::kReady) {
    state.SkipWithError("no embedded interpreter");
    return;
  }
  PyFrameSample samples[kMaxPythonFrames];
  uint32_t ids[kMaxPythonFrames];
  int frames = 0;
  for (auto _ : state) {
    frames = WalkPythonFrames(samples, kMaxPythonFrames);
    if (intern) InternPythonFrames(samples, frames, ids);
    benchmark::DoNotOptimize(samples);
    benchmark::DoNotOptimize(ids);
  }
  state.counters["frames"] = frames;
  if (frames != state.range(0)) state.SkipWithError("the recursion is not as deep as named");
}

PyObject* RunBenchmarks(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS benchmark::RunSpecifiedBenchmarks(g_reporter);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

PyMethodDef kMethods[] = {{"run", RunBenchmarks, METH_NOARGS, nullptr},
                          {nullptr, nullptr, 0, nullptr}};
PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "_bench", nullptr, -1, kMethods, nullptr, nullptr, nullptr, nullptr};
PyObject* InitModule() {
  return PyModule_Create(&kModule);
}

// The module frame plus depth - 1 calls of descend(): `depth` Python frames under the
// benchmarks, which are the only ones registered then.
bool RunReal(int depth) {
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark("Real/Walk", Real, false)->Arg(depth);
  benchmark::RegisterBenchmark("Real/WalkAndIntern", Real, true)->Arg(depth);
  const std::string driver =
      "import _bench\n"
      "def descend(n):\n"
      "    return _bench.run() if n == 0 else descend(n - 1)\n"
      "descend(" +
      std::to_string(depth - 2) + ")\n";
  return PyRun_SimpleString(driver.c_str()) == 0;
}
#endif

// Repeated runs and medians, 0.1 s each, unless the command line says otherwise.
std::vector<char*> WithDefaults(int argc, char** argv) {
  static char kRepetitions[] = "--benchmark_repetitions=9";
  static char kAggregates[] = "--benchmark_report_aggregates_only=true";
  static char kMinTime[] = "--benchmark_min_time=0.1";
  std::vector<char*> args(argv, argv + argc);
  bool repetitions = false, min_time = false;
  for (int i = 1; i < argc; ++i) {
    repetitions |= std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
    min_time |= std::string(argv[i]).rfind("--benchmark_min_time", 0) == 0;
  }
  if (!repetitions) {
    args.push_back(kRepetitions);
    args.push_back(kAggregates);
  }
  if (!min_time) args.push_back(kMinTime);
  return args;
}

}  // namespace
}  // namespace gpuperf::inject

int main(int argc, char** argv) {
  using namespace gpuperf::inject;
  std::vector<char*> args = WithDefaults(argc, argv);
  int count = int(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  MedianReporter reporter;
  g_reporter = &reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
#ifdef GPUPERF_BENCH_EMBED_PYTHON
  PyImport_AppendInittab("_bench", InitModule);
  Py_Initialize();
  InitPythonFrames(nullptr);
  // The Real benchmarks are registered only now; a filter that cannot name them skips them
  // (the library would say it matched nothing).
  const std::string filter = benchmark::GetBenchmarkFilter();
  const bool real = filter.empty() || filter == "." || filter == "all" ||
                    filter.find("Real") != std::string::npos;
  bool ok = true;
  for (int depth : kDepths) ok = ok && (!real || RunReal(depth));
  Py_Finalize();
  if (!ok) return 1;
#else
  std::fprintf(stderr, "python_walk_bench: built without libpython, synthetic frames only\n");
#endif
  reporter.PrintTable();
  benchmark::Shutdown();
  return 0;
}
