#include "cpython/python_layout.h"

#include <cstring>

#include "cpython/python_layout_tables.h"

namespace gpuperf::inject {
namespace {

// _Py_DebugOffsets, section by section, up to the sections we read; every member is a
// uint64_t. The sections both 3.13 and 3.14 have alike:
struct RuntimeStateOffsets {
  uint64_t size, finalizing, interpreters_head;
};
struct ThreadStateOffsets {
  uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk,
      status;
};
struct PyObjectOffsets {
  uint64_t size, ob_type;
};
struct TypeObjectOffsets {
  uint64_t size, tp_name, tp_repr, tp_flags;
};
struct SequenceOffsets {  // tuple_object, list_object
  uint64_t size, ob_item, ob_size;
};
struct DictOffsets {
  uint64_t size, ma_keys, ma_values;
};
struct FloatOffsets {
  uint64_t size, ob_fval;
};
struct LongOffsets {
  uint64_t size, lv_tag, ob_digit;
};
struct BytesOffsets {
  uint64_t size, ob_size, ob_sval;
};
struct UnicodeOffsets {
  uint64_t size, state, length, asciiobject_size;
};

// 3.13 (Include/internal/pycore_runtime.h).
struct DebugOffsets313 {
  char cookie[8];
  uint64_t version, free_threaded;
  RuntimeStateOffsets runtime_state;
  struct {
    uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
        gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
        gil_runtime_state_holder;
  } interpreter_state;
  ThreadStateOffsets thread_state;
  struct {
    uint64_t size, previous, executable, instr_ptr, localsplus, owner;
  } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
        localspluskinds, co_code_adaptive;
  } code_object;
  PyObjectOffsets pyobject;
  TypeObjectOffsets type_object;
  SequenceOffsets tuple_object, list_object;
  DictOffsets dict_object;
  FloatOffsets float_object;
  LongOffsets long_object;
  BytesOffsets bytes_object;
  UnicodeOffsets unicode_object;
};

// 3.14 (Include/internal/pycore_debug_offsets.h): the interpreter state gains
// threads_main, code_object_generation and tlbc_generation, frames stackpointer and
// tlbc_index, code objects co_tlbc, and a set_object section comes before dict_object.
struct DebugOffsets314 {
  char cookie[8];
  uint64_t version, free_threaded;
  RuntimeStateOffsets runtime_state;
  struct {
    uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict, builtins,
        ceval_gil, gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
        gil_runtime_state_holder, code_object_generation, tlbc_generation;
  } interpreter_state;
  ThreadStateOffsets thread_state;
  struct {
    uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer, tlbc_index;
  } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
        localspluskinds, co_code_adaptive, co_tlbc;
  } code_object;
  PyObjectOffsets pyobject;
  TypeObjectOffsets type_object;
  SequenceOffsets tuple_object, list_object;
  struct {
    uint64_t size, used, table, mask;
  } set_object;
  DictOffsets dict_object;
  FloatOffsets float_object;
  LongOffsets long_object;
  BytesOffsets bytes_object;
  UnicodeOffsets unicode_object;
};

// Offsets well past any real struct mean the table is not what we think it is.
constexpr uint64_t kMaxSaneOffset = 4096;

bool FieldFits(uint64_t offset, uint64_t width, uint64_t struct_size) {
  return offset < kMaxSaneOffset && struct_size < kMaxSaneOffset && offset + width <= struct_size;
}

template <typename Offsets>
bool Convert(const Offsets& d, uint32_t major, uint32_t minor, PyLayout* out, const char** why) {
  if (std::memcmp(d.cookie, "xdebugpy", 8) != 0) {
    *why = "_PyRuntime.debug_offsets has no \"xdebugpy\" cookie";
    return false;
  }
  if ((d.version >> 16) != ((major << 8) | minor)) {
    *why = "_PyRuntime.debug_offsets is of another version than Py_Version";
    return false;
  }
  if (d.free_threaded != 0) {
    *why = "free-threaded CPython builds are not supported";
    return false;
  }
  const auto& ts = d.thread_state;
  const auto& fr = d.interpreter_frame;
  const auto& co = d.code_object;
  bool ok = FieldFits(ts.current_frame, 8, ts.size) && FieldFits(fr.previous, 8, fr.size) &&
            FieldFits(fr.executable, 8, fr.size) && FieldFits(fr.instr_ptr, 8, fr.size) &&
            FieldFits(fr.owner, 1, fr.size) && FieldFits(co.filename, 8, co.size) &&
            FieldFits(co.name, 8, co.size) && FieldFits(co.qualname, 8, co.size) &&
            FieldFits(co.linetable, 8, co.size) && FieldFits(co.firstlineno, 4, co.size) &&
            FieldFits(co.co_code_adaptive, 2, co.size) && co.co_code_adaptive >= 16 &&
            FieldFits(d.pyobject.ob_type, 8, d.pyobject.size) &&
            FieldFits(d.bytes_object.ob_size, 8, d.bytes_object.size) &&
            d.bytes_object.ob_sval < kMaxSaneOffset &&
            FieldFits(d.unicode_object.state, 4, d.unicode_object.size) &&
            FieldFits(d.unicode_object.length, 8, d.unicode_object.size) &&
            d.unicode_object.asciiobject_size < kMaxSaneOffset;
  if (!ok) {
    *why = "_PyRuntime.debug_offsets has offsets outside their structs";
    return false;
  }
  PyLayout l;
  l.version = PyVersionHex(major, minor);
  l.flavor = PyFrameFlavor::kShimFrames;
  l.line_format = PyLineTableFormat::kLocations311;
  l.tstate_frame = int32_t(ts.current_frame);
  l.frame_previous = int32_t(fr.previous);
  l.frame_code = int32_t(fr.executable);
  l.frame_instr = int32_t(fr.instr_ptr);
  l.frame_owner = int32_t(fr.owner);
  l.instr_is_pointer = true;
  // 3.13: FRAME_OWNED_BY_CSTACK = 3. 3.14: FRAME_OWNED_BY_INTERPRETER = 3 and
  // FRAME_OWNED_BY_CSTACK = 4; neither holds a Python function's frame.
  l.shim_owner = 3;
  // 3.14's f_executable is a _PyStackRef: the low bits are tags, objects are 8-aligned.
  if (minor >= 14) l.code_pointer_mask = ~uint64_t{7};
  l.code_first_line = int32_t(co.firstlineno);
  l.code_name = int32_t(co.name);
  l.code_qualname = int32_t(co.qualname);
  l.code_filename = int32_t(co.filename);
  l.code_line_table = int32_t(co.linetable);
  l.code_bytecode = int32_t(co.co_code_adaptive);
  // Not in the debug offsets: 3.13's and 3.14's PyCodeObject end, as 3.11's and 3.12's do,
  // with `int _co_firsttraceable; void *co_extra; char co_code_adaptive[]`.
  l.code_first_traceable = l.code_bytecode - 16;
  // Nor is co_version: in 3.12 to 3.14 it follows co_firstlineno and five more ints.
  l.code_version = l.code_first_line + 24;
  l.ob_type = int32_t(d.pyobject.ob_type);
  l.var_size = int32_t(d.bytes_object.ob_size);
  l.bytes_data = int32_t(d.bytes_object.ob_sval);
  l.unicode_length = int32_t(d.unicode_object.length);
  l.unicode_state = int32_t(d.unicode_object.state);
  l.unicode_ascii_data = int32_t(d.unicode_object.asciiobject_size);
  // PyCompactUnicodeObject = PyASCIIObject + utf8_length + utf8 (3.12 and later).
  l.unicode_compact_data = l.unicode_ascii_data + 16;
  // Real 3.13 and 3.14 builds walk as the built-in copies, whose loops are compiled with
  // constant offsets; anything else reads them at run time.
  const PyLayout& builtin = minor == 13 ? kPyLayout313 : kPyLayout314;
  l.builtin_id = minor <= 14 && SameWalkLoop(l, builtin) ? builtin.builtin_id : 0;
  *out = l;
  return true;
}

template <typename Offsets>
bool ThreadListOf(const Offsets& d, PyThreadList* out) {
  const auto& rt = d.runtime_state;
  const auto& is = d.interpreter_state;
  const auto& ts = d.thread_state;
  // _PyRuntimeState and PyInterpreterState are hundreds of KiB (3.13's threads.head is
  // at 7,344): a looser bound there.
  auto head_fits = [](uint64_t offset, uint64_t struct_size) {
    return struct_size < (uint64_t{16} << 20) && offset + 8 <= struct_size;
  };
  if (!head_fits(rt.interpreters_head, rt.size) || !head_fits(is.threads_head, is.size) ||
      !FieldFits(ts.next, 8, ts.size) || !FieldFits(ts.native_thread_id, 8, ts.size)) {
    return false;
  }
  out->interpreters_head = int32_t(rt.interpreters_head);
  out->threads_head = int32_t(is.threads_head);
  out->tstate_next = int32_t(ts.next);
  out->tstate_native_thread_id = int32_t(ts.native_thread_id);
  out->tstate_thread_id = FieldFits(ts.thread_id, 8, ts.size) ? int32_t(ts.thread_id) : -1;
  return true;
}

// 3.11 and 3.12: _PyRuntimeState begins with five ints and _finalizing, then
// `interpreters` {mutex, head}; 3.11's PyInterpreterState begins {next, threads
// {next_unique_id, head}}, 3.12's has id, id_refcount, requires_idref, id_mutex,
// _initialized, finalizing, monitoring_version and last_restart_version before `threads`.
// PyThreadState {prev, next, ...}; native_thread_id follows thread_id (3.12 moved both
// up: the exception fields before them became one). 3.10: four ints, then _finalizing and
// `interpreters`; PyInterpreterState {next, tstate_head}; thread_id after prev, next,
// interp, frame, four ints, cframe, four trace fields, three curexc, exc_state (four
// pointers), exc_info, dict, gilstate_counter and async_exc.
constexpr PyThreadList kThreadList310{32, 8, 8, -1, 176};
constexpr PyThreadList kThreadList311{40, 16, 8, 160, 152};
constexpr PyThreadList kThreadList312{40, 72, 8, 144, 136};

}  // namespace

const PyThreadList* BuiltinPyThreadList(uint32_t major, uint32_t minor) {
  if (major != 3) return nullptr;
  if (minor == 10) return &kThreadList310;
  if (minor == 11) return &kThreadList311;
  if (minor == 12) return &kThreadList312;
  return nullptr;
}

bool PyThreadListFromDebugOffsets(const void* runtime, uint32_t major, uint32_t minor,
                                  PyThreadList* out) {
  if (runtime == nullptr || major != 3) return false;
  if (minor == 13) {
    DebugOffsets313 d;
    std::memcpy(&d, runtime, sizeof(d));
    return ThreadListOf(d, out);
  }
  if (minor == 14) {
    DebugOffsets314 d;
    std::memcpy(&d, runtime, sizeof(d));
    return ThreadListOf(d, out);
  }
  return false;
}

bool SameWalkLoop(const PyLayout& a, const PyLayout& b) {
  return a.flavor == b.flavor && a.frame_previous == b.frame_previous &&
         a.frame_code == b.frame_code && a.frame_instr == b.frame_instr &&
         a.frame_owner == b.frame_owner && a.frame_is_entry == b.frame_is_entry &&
         a.shim_owner == b.shim_owner && a.code_pointer_mask == b.code_pointer_mask &&
         a.code_bytecode == b.code_bytecode && a.ob_type == b.ob_type;
}

const PyLayout* BuiltinPyLayout(uint32_t major, uint32_t minor) {
  if (major != 3) return nullptr;
  switch (minor) {
    case 10:
      return &kPyLayout310;
    case 11:
      return &kPyLayout311;
    case 12:
      return &kPyLayout312;
    default:
      return nullptr;
  }
}

bool PyLayoutFromDebugOffsets(const void* runtime, uint32_t major, uint32_t minor, PyLayout* out,
                              const char** why) {
  if (runtime == nullptr) {
    *why = "_PyRuntime not found";
    return false;
  }
  if (major == 3 && minor == 13) {
    DebugOffsets313 d;
    std::memcpy(&d, runtime, sizeof(d));
    return Convert(d, major, minor, out, why);
  }
  if (major == 3 && minor == 14) {
    DebugOffsets314 d;
    std::memcpy(&d, runtime, sizeof(d));
    return Convert(d, major, minor, out, why);
  }
  *why = "this CPython version's frame layout is not known";
  return false;
}

}  // namespace gpuperf::inject
