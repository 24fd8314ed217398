#include "inject/python/python_frames.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>

#include "inject/python/python_code_table.h"

namespace gpuperf::inject {
namespace {

std::mutex g_init_mutex;
std::atomic<PythonFramesState> g_state{PythonFramesState::kOff};
std::atomic<uint32_t> g_version{0};
// Written once, before g_state becomes kReady (release); read after an acquire of kReady.
PyRuntimeView g_view;
// Created at the first successful probe and never destroyed: app threads may still be in
// a callback while the process exits.
PyCodeTable* g_codes = nullptr;
// Each thread's cache of the code ids it looked up (python_code_table.h): about 10 KiB of
// thread-local memory, freed with the thread.
thread_local PyCodeCache t_code_cache;

struct Counters {
  std::atomic<uint64_t> no_thread_state{0}, refused{0}, truncated{0}, broken{0}, skipped_frames{0};
};
Counters g_counters;

void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

void* DlsymDefault(const char* name) {
  return dlsym(RTLD_DEFAULT, name);
}

void DefaultNotice(const char* line) {
  char text[320];
  int n = std::snprintf(text, sizeof(text), "gpuperf[%d]: %s\n", int(getpid()), line);
  if (n > 0) {
    ssize_t ignored =
        ::write(STDERR_FILENO, text, size_t(n) < sizeof(text) ? size_t(n) : sizeof(text) - 1);
    (void)ignored;
  }
}

PythonFramesState Probe(PySymbolLookup lookup, PythonNoticeSink notice) {
  PyRuntimeView view;
  uint32_t version = 0;
  const char* why = "";
  PythonProbe probe = ProbePythonRuntime(lookup, &view, &version, &why);
  g_version.store(version, std::memory_order_relaxed);
  if (probe == PythonProbe::kAbsent) return PythonFramesState::kAbsent;
  if (probe == PythonProbe::kReady && g_codes == nullptr) {
    g_codes = new (std::nothrow) PyCodeTable();
    if (g_codes != nullptr && !g_codes->ok()) {
      delete g_codes;
      g_codes = nullptr;
    }
    if (g_codes == nullptr) {
      probe = PythonProbe::kRefused;
      why = "no memory for the code object table";
    }
  }
  if (probe == PythonProbe::kRefused) {
    char line[256];
    std::snprintf(line, sizeof(line), "no Python frames in launch stacks (CPython %u.%u): %s",
                  version >> 24, (version >> 16) & 0xff, why);
    (notice != nullptr ? notice : DefaultNotice)(line);
    return PythonFramesState::kRefused;
  }
  g_view = view;
  return PythonFramesState::kReady;
}

}  // namespace

PythonFramesState InitPythonFrames(PythonNoticeSink notice) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  PythonFramesState state = g_state.load(std::memory_order_relaxed);
  if (state == PythonFramesState::kOff || state == PythonFramesState::kAbsent) {
    state = Probe(DlsymDefault, notice);
    g_state.store(state, std::memory_order_release);
  }
  return state;
}

PythonFramesState InitPythonFramesForTesting(PySymbolLookup lookup, PythonNoticeSink notice) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  g_state.store(PythonFramesState::kOff, std::memory_order_release);
  PythonFramesState state = Probe(lookup, notice);
  g_state.store(state, std::memory_order_release);
  return state;
}

PythonFramesState GetPythonFramesState() {
  return g_state.load(std::memory_order_acquire);
}

uint32_t PythonFramesVersion() {
  return g_version.load(std::memory_order_relaxed);
}

int WalkPythonFrames(PyFrameSample* out, int max) {
  PythonFramesState state = g_state.load(std::memory_order_acquire);
  if (state != PythonFramesState::kReady) {
    if (state == PythonFramesState::kRefused) Bump(g_counters.refused);
    return 0;
  }
  auto tstate = reinterpret_cast<uint64_t>(g_view.thread_state());
  if (tstate == 0) {
    Bump(g_counters.no_thread_state);
    return 0;
  }
  PyWalkResult result = WalkPyFramesOf(g_view, tstate, out, max);
  if (result.truncated) Bump(g_counters.truncated);
  if (result.broken) Bump(g_counters.broken);
  if (result.skipped != 0) Bump(g_counters.skipped_frames, result.skipped);
  return result.frames;
}

int InternPythonFrames(const PyFrameSample* frames, int n, uint32_t* code_ids) {
  if (g_state.load(std::memory_order_acquire) != PythonFramesState::kReady) return n;
  return g_codes->InternAll(g_view, frames, n, code_ids, t_code_cache);
}

void RewindPythonCodeDrain() {
  if (g_codes != nullptr) g_codes->RewindDrain();
}

void DrainNewPythonCodes(std::vector<PyCodeInfo>& out) {
  if (g_state.load(std::memory_order_acquire) != PythonFramesState::kReady) return;
  g_codes->DrainNew(out);
}

PythonFramesCounters GetPythonFramesCounters() {
  PythonFramesCounters c;
  c.no_thread_state = g_counters.no_thread_state.load(std::memory_order_relaxed);
  c.refused = g_counters.refused.load(std::memory_order_relaxed);
  c.truncated = g_counters.truncated.load(std::memory_order_relaxed);
  c.broken = g_counters.broken.load(std::memory_order_relaxed);
  c.skipped_frames = g_counters.skipped_frames.load(std::memory_order_relaxed);
  if (g_codes != nullptr && g_state.load(std::memory_order_acquire) == PythonFramesState::kReady) {
    c.codes = g_codes->size();
    c.intern_failed = g_codes->failed();
    c.unreadable_names = g_codes->unreadable();
    c.code_cache_misses = g_codes->cache_misses();
  }
  return c;
}

}  // namespace gpuperf::inject
