// What reading the Python frames of a launch costs (budget: 100 ns for 50 frames):
//   Synthetic/<version>: WalkPyFramesOf over 50 frames laid out as each CPython version
//     lays them out (tests/python/fake_python.h), entry frames every 5;
//   Chase: following 50 plain "previous" pointers, the floor any frame walk stands on
//     (one dependent load per frame);
//   SyntheticWithIntern/<version>: the same plus finding the 50 (known) code objects' ids;
//   Real/Walk, Real/WalkAndIntern: WalkPythonFrames (and InternPythonFrames) on the real
//     interpreter this benchmark embeds (when built with libpython), called with the GIL
//     released from a 50-frame-deep Python recursion, as the launch callback would be.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
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

constexpr int kFrames = 50;

std::unique_ptr<FakePython> FiftyFrames(FakeVersion version) {
  auto fake = std::make_unique<FakePython>(version);
  for (int i = 0; i < kFrames; ++i) {
    FakeCodeSpec spec;
    spec.first_line = 10 * i + 1;
    fake->PushFrame(fake->NewCode(spec), uint32_t(i), i % 5 == 0);
  }
  return fake;
}

void Chase(benchmark::State& state) {
  struct Node {
    Node* previous;
    uint64_t payload[8];
  };
  std::vector<std::unique_ptr<Node>> nodes;
  Node* top = nullptr;
  for (int i = 0; i < kFrames; ++i) {
    nodes.push_back(std::make_unique<Node>());
    nodes.back()->previous = top;
    top = nodes.back().get();
  }
  for (auto _ : state) {
    int n = 0;
    for (Node* node = top; node != nullptr; node = node->previous) ++n;
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(Chase);

void Synthetic(benchmark::State& state, FakeVersion version) {
  auto fake = FiftyFrames(version);
  PyFrameSample samples[kMaxPythonFrames];
  int frames = 0;
  for (auto _ : state) {
    frames = WalkPyFramesOf(fake->view(), fake->thread_state(), samples, kMaxPythonFrames).frames;
    benchmark::DoNotOptimize(samples);
  }
  state.counters["frames"] = frames;
}

void SyntheticWithIntern(benchmark::State& state, FakeVersion version) {
  auto fake = FiftyFrames(version);
  PyCodeTable table;
  auto cache = std::make_unique<PyCodeCache>();
  PyFrameSample samples[kMaxPythonFrames];
  uint32_t ids[kMaxPythonFrames];
  int frames = 0;
  for (auto _ : state) {
    frames = WalkPyFramesOf(fake->view(), fake->thread_state(), samples, kMaxPythonFrames).frames;
    table.InternAll(fake->view(), samples, frames, ids, *cache);
    benchmark::DoNotOptimize(ids);
  }
  state.counters["frames"] = frames;
}

#define GP_SYNTHETIC(version, name)                         \
  BENCHMARK_CAPTURE(Synthetic, name, FakeVersion::version); \
  BENCHMARK_CAPTURE(SyntheticWithIntern, name, FakeVersion::version);
GP_SYNTHETIC(k310, py310)
GP_SYNTHETIC(k311, py311)
GP_SYNTHETIC(k312, py312)
GP_SYNTHETIC(k313, py313)
GP_SYNTHETIC(k314, py314)
#undef GP_SYNTHETIC

#ifdef GPUPERF_BENCH_EMBED_PYTHON
// Runs inside Python, at the bottom of a recursion (see main); the GIL is released.
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
}
BENCHMARK_CAPTURE(Real, Walk, false);
BENCHMARK_CAPTURE(Real, WalkAndIntern, true);

PyObject* RunBenchmarks(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS benchmark::RunSpecifiedBenchmarks();
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

PyMethodDef kMethods[] = {{"run", RunBenchmarks, METH_NOARGS, nullptr},
                          {nullptr, nullptr, 0, nullptr}};
PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT, "_bench", nullptr, -1, kMethods, nullptr, nullptr, nullptr, nullptr};
PyObject* InitModule() {
  return PyModule_Create(&kModule);
}

// The module frame plus 49 calls of descend(): 50 Python frames under the benchmarks.
const char kDriver[] =
    "import _bench\n"
    "def descend(n):\n"
    "    return _bench.run() if n == 0 else descend(n - 1)\n"
    "descend(48)\n";
#endif

}  // namespace
}  // namespace gpuperf::inject

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#ifdef GPUPERF_BENCH_EMBED_PYTHON
  using namespace gpuperf::inject;
  PyImport_AppendInittab("_bench", InitModule);
  Py_Initialize();
  InitPythonFrames(nullptr);
  int failed = PyRun_SimpleString(kDriver);
  Py_Finalize();
  if (failed != 0) return 1;
#else
  std::fprintf(stderr, "python_walk_bench: built without libpython, synthetic frames only\n");
  benchmark::RunSpecifiedBenchmarks();
#endif
  benchmark::Shutdown();
  return 0;
}
