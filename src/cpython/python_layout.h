// Where a CPython interpreter keeps what the frame walker reads: byte offsets into its
// thread state, frames, code objects and string/bytes objects, for one minor version.
//
// 3.10-3.12 have no self-description, so their offsets are built in (transcribed from
// each version's headers: cpython/pystate.h, cpython/frameobject.h (3.10),
// internal/pycore_frame.h (3.11+), cpython/code.h, cpython/unicodeobject.h; the same
// for every patch release of a minor). 3.13 and later publish them in
// _PyRuntime.debug_offsets (_Py_DebugOffsets, cookie "xdebugpy"), whose own layout is
// fixed per minor: 3.13's and 3.14's are mirrored here.
//
// Only x86-64/aarch64 (LP64) release builds with the GIL are described. Debug
// (Py_DEBUG/Py_TRACE_REFS) and free-threaded builds are refused by the caller.
#pragma once

#include <cstdint>

#include "cpython/python_lines.h"

namespace gpuperf::inject {

enum class PyFrameFlavor : uint8_t {
  kFrameObjects,  // 3.10: PyFrameObject chain; every frame has its own native eval call
  kEntryFlag,     // 3.11: _PyInterpreterFrame; is_entry marks where a native eval call began
  kShimFrames,    // 3.12+: _PyInterpreterFrame; frames with owner >= shim_owner are the
                  // C-stack entry shims that separate native eval calls
};

constexpr uint32_t PyVersionHex(uint32_t major, uint32_t minor) {
  return (major << 24) | (minor << 16);
}

// Offsets in bytes; -1 = the version has no such field.
struct PyLayout {
  // 10-14: the offsets the walk loop reads equal the built-in layout of 3.<id>
  // (python_layout_tables.h), whose walk has them compiled in; 0: any other, walked with
  // these offsets read at run time.
  uint8_t builtin_id = 0;
  uint32_t version = 0;  // PyVersionHex(major, minor)
  PyFrameFlavor flavor = PyFrameFlavor::kFrameObjects;
  PyLineTableFormat line_format = PyLineTableFormat::kNone;

  // PyThreadState: the frame pointer (3.10 `frame`, 3.13+ `current_frame`), or on 3.11 and
  // 3.12 the `cframe` pointer, whose _PyCFrame holds `current_frame` at cframe_current_frame.
  int32_t tstate_frame = -1;
  int32_t cframe_current_frame = -1;

  // Frames (3.10: f_back, f_code, f_lasti as an int index; 3.11+: previous, f_code or
  // f_executable, prev_instr or instr_ptr as a pointer into the bytecode).
  int32_t frame_previous = -1;
  int32_t frame_code = -1;
  int32_t frame_instr = -1;
  int32_t frame_owner = -1;                   // 3.11+ (a char)
  int32_t frame_is_entry = -1;                // 3.11 (a bool)
  int8_t shim_owner = 3;                      // 3.12/3.13 FRAME_OWNED_BY_CSTACK; 3.14 also 4
  bool instr_is_pointer = false;              // 3.11+: frame_instr points at a code unit
  uint64_t code_pointer_mask = ~uint64_t{0};  // 3.14: f_executable is a tagged _PyStackRef

  // PyCodeObject.
  int32_t code_first_line = -1;
  // 3.12+: co_version, numbered from a per-interpreter counter as each code object is made,
  // so a code object at a reused address has another one (until the counter runs out at
  // 2^32, when every later one gets 0).
  int32_t code_version = -1;
  int32_t code_name = -1;
  int32_t code_qualname = -1;  // 3.11+
  int32_t code_filename = -1;
  int32_t code_line_table = -1;
  int32_t code_bytecode = -1;  // 3.11+: co_code_adaptive (inline); 3.10: co_code (a bytes object)
  // 3.11+: _co_firsttraceable, the first code unit of the function proper. A frame whose
  // instruction is before it (and that is not a generator's) is "incomplete": it has not
  // started, or is an interpreter-internal trampoline such as 3.13's _Py_InitCleanup.
  // CPython leaves those out of tracebacks and sys._getframe(); so does the reader of a
  // trace. The code table copies it once per code object (python_code_table.h).
  int32_t code_first_traceable = -1;

  // Object headers.
  int32_t ob_type = 8;
  int32_t var_size = 16;    // PyVarObject.ob_size (bytes length; 3.11+ code units of a code object)
  int32_t bytes_data = 32;  // PyBytesObject.ob_sval
  int32_t unicode_length = 16;
  int32_t unicode_state = 32;
  int32_t unicode_hash = 24;          // the cached hash of the characters, -1 until computed
  int32_t unicode_ascii_data = -1;    // sizeof(PyASCIIObject)
  int32_t unicode_compact_data = -1;  // sizeof(PyCompactUnicodeObject)

  // Equal offsets and flags (builtin_id included).
  bool operator==(const PyLayout&) const = default;
};

// Where an interpreter lists its threads, for a reader outside the process (the eBPF CPU
// profiler, src/ebpf/python_target.h), which must find a thread's PyThreadState by its
// native thread id: _PyRuntime.interpreters.head, PyInterpreterState.threads.head (3.10
// tstate_head), PyThreadState.next and .native_thread_id (3.11+). 3.10 has no native id;
// its thread_id, pthread_self(), is the thread's TLS pointer with glibc and musl. Byte
// offsets.
struct PyThreadList {
  int32_t interpreters_head = -1;
  int32_t threads_head = -1;
  int32_t tstate_next = -1;
  int32_t tstate_native_thread_id = -1;
  int32_t tstate_thread_id = -1;  // 3.10: compared with the thread pointer instead
  bool operator==(const PyThreadList&) const = default;
};

// The built-in thread list of 3.10, 3.11 or 3.12 (pycore_runtime.h, pycore_interp.h,
// cpython/pystate.h), or null.
const PyThreadList* BuiltinPyThreadList(uint32_t major, uint32_t minor);

// 3.13+: the thread list from the _Py_DebugOffsets at the start of `runtime`; false when
// they are not usable (call PyLayoutFromDebugOffsets first: it checks the cookie and version).
bool PyThreadListFromDebugOffsets(const void* runtime, uint32_t major, uint32_t minor,
                                  PyThreadList* out);

// The built-in layout of a version without debug offsets (3.10, 3.11, 3.12), or null.
const PyLayout* BuiltinPyLayout(uint32_t major, uint32_t minor);

// Whether the walk loop (python_walk.cc) reads the same offsets and flags in `a` and `b`.
bool SameWalkLoop(const PyLayout& a, const PyLayout& b);

// Reads the layout of a 3.13+ interpreter from the _Py_DebugOffsets at the start of
// `runtime` (_PyRuntime). Returns false, with a reason, when the cookie, the version
// (must equal major.minor), the build (free-threaded) or an offset is not what we can use.
bool PyLayoutFromDebugOffsets(const void* runtime, uint32_t major, uint32_t minor, PyLayout* out,
                              const char** why);

}  // namespace gpuperf::inject
