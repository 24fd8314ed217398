// Python frames in CPU samples: what the recorder finds out, from outside, about a
// process's CPython interpreter, so that the BPF program can walk its threads' frame
// chains (cpu_profile.bpf.c walk_python) and the recorder can name the code objects they
// ran (read from the process's memory, /proc/PID/mem style, while it is alive).
//
// The interpreter is the mapped module that defines _PyRuntime (a python3.X executable or
// libpython3.X.so), found in its ELF symbol tables; its version comes from the module's
// name, and its layout from the tables the injection library walks with
// (src/cpython/python_layout.h): built in for 3.10 to 3.12, _Py_DebugOffsets for
// 3.13 and 3.14. Anything else is refused with a reason. Code objects are read as the
// injection library's interner reads them, by copying each object into local memory and
// decoding the copy with the same functions (python_objects.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cpython/python_lines.h"
#include "cpython/python_runtime.h"
#include "ebpf/cpu_profile_abi.h"
#include "ebpf/proc_maps.h"

namespace gpuperf::ebpf {

enum class PythonTargetState : uint8_t {
  kAbsent,   // no CPython interpreter mapped
  kReady,    // `bpf` and `view` are filled in
  kRefused,  // an interpreter whose layout is unknown: `why` says why
};

struct PythonTarget {
  PythonTargetState state = PythonTargetState::kAbsent;
  std::string why;
  std::string module;  // the interpreter's file
  uint32_t version = 0;
  gp_py_target bpf{};
  // The layout, and &PyCode_Type, &PyUnicode_Type and &PyBytes_Type in the process
  // (thread_state unused): for reading its code objects.
  inject::PyRuntimeView view;
};

// Looks for the interpreter among process `pid`'s mapped modules (ReadProcessModules, as
// the recorder has just read them). The environment variable GPUPERF_CPU_PYTHON_VERSION=3.N
// makes it take the interpreter for 3.N (tests: an unknown version must be refused, and
// cost only the Python frames).
PythonTarget FindPythonTarget(uint32_t pid, const std::vector<MappedModule>& modules);

// Whether a mapped file's name is that of a CPython interpreter (python3.X, libpython3.X.so*);
// sets major and minor.
bool IsPythonInterpreterFile(std::string_view path, uint32_t* major, uint32_t* minor);

// Copies what names the code object at `code` (qualified name, file name, first line, line
// table, code units, first traceable unit) as the injection library's interner does.
// False when it is not a readable code object, or no longer the one sampled: its 8 bytes
// at gp_py_target.code_key are not `key` (python_code_table.h says why addresses alone
// cannot tell).
bool ReadRemoteCode(uint32_t pid, const PythonTarget& target, uint64_t code, uint64_t key,
                    PyCodeInfo* out);

}  // namespace gpuperf::ebpf
