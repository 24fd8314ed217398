// Python frames at CUDA launches: the in-process CPython frame walker, the API the CUPTI
// launch callback calls.
//
// Design (DESIGN.md "Python frames"; shared/notes/next-capabilities.md §1):
// - PyTorch releases the GIL before it dispatches to CUDA, so in the launch callback the
//   GIL is normally not held and the Python API (PyFrame_*, which needs it and allocates
//   frame objects on 3.11+) cannot be used. Instead the calling thread's own frame chain
//   is read in place: its PyThreadState comes from PyGILState_GetThisThreadState() (TSS,
//   valid without the GIL), the frames by per-version offsets (python_layout.h). Only the
//   owning thread changes its chain, and it is busy in our callback.
// - Discovery (InitPythonFrames) uses dlsym(RTLD_DEFAULT): libpython is never linked. It
//   reads the version (Py_Version, or Py_GetVersion() on 3.10), refuses debug builds,
//   pre-releases, free-threaded builds and versions we have no layout for with ONE notice,
//   then counts the launches it could not walk (PythonFramesCounters::refused).
// - The walk records per frame (code object, instruction offset in code units, entry flag,
//   owner): no GIL, no Python calls, no allocation, no locks, at most kMaxPythonFrames
//   frames and a bounded number of links (a cycle cannot hang it); threads without a thread
//   state get no frames (counted). 3.11+ incomplete frames are recorded too and left out by
//   the reader (python_walk.h).
// - Interning (InternPythonFrames) gives each code object a small id (from the thread's
//   own cache of recent ids when it can, validated on every hit) and copies, the first
//   time only, its qualified name, file name, first line and raw line table, so nothing
//   points into Python's memory afterwards (python_code_table.h). The writer thread drains
//   the copies (DrainNewPythonCodes); lines are resolved offline (cpython/python_lines.h).
// - Merging with the native stack (done by the caller): innermost first, the frames up to
//   and including the first one flagged kPyFrameEntry ran in the innermost native
//   _PyEval_EvalFrameDefault frame, the frames up to the next flagged one in the next
//   native eval frame, and so on.
#pragma once

#include <cstdint>
#include <vector>

#include "cpython/python_lines.h"
#include "inject/python/python_walk.h"

namespace gpuperf::inject {

enum class PythonFramesState : uint8_t {
  kOff,      // InitPythonFrames not called yet
  kAbsent,   // no CPython interpreter in the process
  kReady,    // walks read frames
  kRefused,  // an interpreter we must not read (notice printed once)
};

// Relaxed counts since start; only exceptional events are counted, never each walk.
struct PythonFramesCounters {
  uint64_t no_thread_state = 0;   // walks on threads without a Python thread state
  uint64_t refused = 0;           // walks skipped because the interpreter was refused
  uint64_t truncated = 0;         // stacks cut at kMaxPythonFrames
  uint64_t broken = 0;            // walks ended early by a misaligned pointer
  uint64_t skipped_frames = 0;    // frames whose code was not a code object
  uint64_t codes = 0;             // code objects interned
  uint64_t intern_failed = 0;     // frames left without a code id (table full or lock busy)
  uint64_t unreadable_names = 0;  // names or file names that could not be read
  // Frames whose code id was not in the thread's own cache (the shared table was searched;
  // first sights included): after warm-up, near 0 per launch.
  uint64_t code_cache_misses = 0;
};

// Receives the one line of a refusal (no trailing newline).
using PythonNoticeSink = void (*)(const char* line);

// Looks for the interpreter and chooses its layout. Call at init, before launches (it
// takes the dynamic loader's lock, which an app thread must not wait for in a callback).
// Calling again probes again only while no interpreter was found (an embedding program
// may load libpython later); a refusal is final and reported once through `notice`.
PythonFramesState InitPythonFrames(PythonNoticeSink notice);
PythonFramesState GetPythonFramesState();
// (major << 24) | (minor << 16) of the interpreter found, 0 if none.
uint32_t PythonFramesVersion();

// The calling thread's Python frames, innermost first, into out[0..max) (max is capped at
// kMaxPythonFrames). Returns the count; 0 when not ready or the thread has no thread state.
int WalkPythonFrames(PyFrameSample* out, int max);

// Sets code_ids[i] to the id (PyCodeInfo::id) of frames[i]'s code object, interning code
// objects seen for the first time. Call in the same callback as the walk (the frames keep
// their code objects alive only while they run). Returns how many were left at 0.
int InternPythonFrames(const PyFrameSample* frames, int n, uint32_t* code_ids);

// The code objects interned since the previous call (writer thread).
void DrainNewPythonCodes(std::vector<PyCodeInfo>& out);
// The next DrainNewPythonCodes copies every code object again (a new trace needs them all).
void RewindPythonCodeDrain();

PythonFramesCounters GetPythonFramesCounters();

// Tests only: probes through `lookup` instead of dlsym, forgetting any earlier result.
PythonFramesState InitPythonFramesForTesting(PySymbolLookup lookup, PythonNoticeSink notice);

}  // namespace gpuperf::inject
