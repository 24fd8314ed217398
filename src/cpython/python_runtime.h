// Finding the CPython interpreter inside the process without linking libpython: its
// symbols are looked up by name (dlsym(RTLD_DEFAULT, ...) in the injection library, a
// table in tests), its version and build checked, and its layout chosen, once.
#pragma once

#include <cstdint>
#include <cstring>

#include "cpython/python_layout.h"

namespace gpuperf::inject {

// Everything the walker and the interner need to read one interpreter's memory.
struct PyRuntimeView {
  PyLayout layout;
  uint64_t code_type = 0;     // &PyCode_Type
  uint64_t unicode_type = 0;  // &PyUnicode_Type
  uint64_t bytes_type = 0;    // &PyBytes_Type
  // PyGILState_GetThisThreadState: the calling thread's PyThreadState from thread-specific
  // storage, valid without the GIL (the "current" thread state is null while the GIL is
  // released, as PyTorch does before dispatching to CUDA).
  void* (*thread_state)() = nullptr;
};

enum class PythonProbe : uint8_t {
  kAbsent,   // no interpreter in the process (or its symbols are not global)
  kReady,    // *view is filled in
  kRefused,  // an interpreter we must not read: *why says why
};

// A field of another object, read in place: memcpy, so unaligned or type-punned fields
// are defined behaviour (it compiles to one load).
template <typename T>
T PyLoad(uint64_t address, int32_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(address + offset), sizeof(T));
  return value;
}

using PySymbolLookup = void* (*)(const char* name);

// Looks for the interpreter through `lookup`. On kReady fills `view`; on kRefused sets
// `why` to one sentence. `version` gets (major << 24) | (minor << 16) when it was read.
PythonProbe ProbePythonRuntime(PySymbolLookup lookup, PyRuntimeView* view, uint32_t* version,
                               const char** why);

}  // namespace gpuperf::inject
