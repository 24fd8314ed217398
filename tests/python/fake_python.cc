#include "python/fake_python.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace gpuperf::testing {
namespace {

// --- Structs transcribed from CPython's headers (LP64, release build, GIL). ---

struct Obj {
  int64_t refcnt;
  uint64_t type;
};
struct VarObj {
  int64_t refcnt;
  uint64_t type;
  int64_t size;
};

// PyASCIIObject's state bitfield, as declared (3.12+ name the last bit statically_allocated).
struct UnicodeState {
  unsigned interned : 2;
  unsigned kind : 3;
  unsigned compact : 1;
  unsigned ascii : 1;
  unsigned ready : 1;
  unsigned : 24;
};
struct Ascii310 {  // 3.10, 3.11: wstr still there
  Obj head;
  int64_t length, hash;
  UnicodeState state;
  uint64_t wstr;
};
struct Compact310 {
  Ascii310 base;
  int64_t utf8_length;
  uint64_t utf8;
  int64_t wstr_length;
};
struct Ascii312 {
  Obj head;
  int64_t length, hash;
  UnicodeState state;
};
struct Compact312 {
  Ascii312 base;
  int64_t utf8_length;
  uint64_t utf8;
};
struct Bytes {
  VarObj head;
  int64_t hash;
  char sval[1];
};

// 3.10: cpython/pystate.h, cpython/frameobject.h, cpython/code.h.
struct TState310 {
  uint64_t prev, next, interp, frame;
  int recursion_depth;
};
struct Frame310 {
  VarObj head;
  uint64_t f_back, f_code, f_builtins, f_globals, f_locals, f_valuestack, f_trace;
  int f_stackdepth;
  char f_trace_lines, f_trace_opcodes;
  uint64_t f_gen;
  int f_lasti, f_lineno, f_iblock, f_state;
};
struct Code310 {
  Obj head;
  int co_argcount, co_posonlyargcount, co_kwonlyargcount, co_nlocals, co_stacksize, co_flags,
      co_firstlineno;
  uint64_t co_code, co_consts, co_names, co_varnames, co_freevars, co_cellvars, co_cell2arg,
      co_filename, co_name, co_linetable;
};

// 3.11: cpython/pystate.h, internal/pycore_frame.h, cpython/code.h.
struct CFrame311 {
  uint8_t use_tracing;
  uint64_t current_frame, previous;
};
struct TState311 {
  uint64_t prev, next, interp;
  int initialized, is_static, recursion_remaining, recursion_limit, recursion_headroom, tracing,
      tracing_what;
  uint64_t cframe;
};
struct Frame311 {
  uint64_t f_func, f_globals, f_builtins, f_locals, f_code, frame_obj, previous, prev_instr;
  int stacktop;
  bool is_entry;
  char owner;
};
struct Code311 {
  VarObj head;
  uint64_t co_consts, co_names, co_exceptiontable;
  int co_flags;
  short co_warmup, co_linearray_entry_size;
  int co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize, co_firstlineno,
      co_nlocalsplus, co_nlocals, co_nplaincellvars, co_ncellvars, co_nfreevars;
  uint64_t co_localsplusnames, co_localspluskinds, co_filename, co_name, co_qualname, co_linetable,
      co_weakreflist, co_code_cache, co_linearray;
  int co_firsttraceable;
  uint64_t co_extra;
  char co_code_adaptive[8];
};

// 3.12.
struct CFrame312 {
  uint64_t current_frame, previous;
};
struct TState312 {
  uint64_t prev, next, interp;
  uint32_t status;
  int py_recursion_remaining, py_recursion_limit, c_recursion_remaining, recursion_headroom,
      tracing, what_event;
  uint64_t cframe;
};
struct Frame312 {
  uint64_t f_code, previous, f_funcobj, f_globals, f_builtins, f_locals, frame_obj, prev_instr;
  int stacktop;
  uint16_t return_offset;
  char owner;
};
struct Code312 {
  VarObj head;
  uint64_t co_consts, co_names, co_exceptiontable;
  int co_flags, co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize, co_firstlineno,
      co_nlocalsplus, co_framesize, co_nlocals, co_ncellvars, co_nfreevars;
  uint32_t co_version;
  uint64_t co_localsplusnames, co_localspluskinds, co_filename, co_name, co_qualname, co_linetable,
      co_weakreflist, co_cached, co_instrumentation_version, co_monitoring;
  int co_firsttraceable;
  uint64_t co_extra;
  char co_code_adaptive[8];
};

// 3.13 (3.14's thread state and code object are read through the same structs: their
// offsets reach the walker only through the debug offsets).
struct TState313 {
  uint64_t prev, next, interp, eval_breaker;
  uint32_t status;
  int whence, state, py_recursion_remaining, py_recursion_limit, c_recursion_remaining,
      recursion_headroom, tracing, what_event;
  uint64_t current_frame;
};
struct Frame313 {
  uint64_t f_executable, previous, f_funcobj, f_globals, f_builtins, f_locals, frame_obj, instr_ptr;
  int stacktop;
  uint16_t return_offset;
  char owner;
};
struct Code313 {
  VarObj head;
  uint64_t co_consts, co_names, co_exceptiontable;
  int co_flags, co_argcount, co_posonlyargcount, co_kwonlyargcount, co_stacksize, co_firstlineno,
      co_nlocalsplus, co_framesize, co_nlocals, co_ncellvars, co_nfreevars;
  uint32_t co_version;
  uint64_t co_localsplusnames, co_localspluskinds, co_filename, co_name, co_qualname, co_linetable,
      co_weakreflist, co_executors, co_cached, co_instrumentation_version, co_monitoring;
  int co_firsttraceable;
  uint64_t co_extra;
  char co_code_adaptive[8];
};
// 3.14: f_executable and f_funcobj are _PyStackRefs, stackpointer replaces stacktop.
struct Frame314 {
  uint64_t f_executable, previous, f_funcobj, f_globals, f_builtins, f_locals, frame_obj, instr_ptr,
      stackpointer;
  uint16_t return_offset;
  char owner;
  uint8_t visited;
};

alignas(16) uint64_t g_code_type[8];
alignas(16) uint64_t g_unicode_type[8];
alignas(16) uint64_t g_bytes_type[8];
thread_local uint64_t g_fake_tstate = 0;

void* FakeThreadStateGetter() {
  return reinterpret_cast<void*>(g_fake_tstate);
}

template <typename T>
T* At(uint64_t address) {
  return reinterpret_cast<T*>(address);
}

bool Before312(FakeVersion v) {
  return v == FakeVersion::k310 || v == FakeVersion::k311;
}

}  // namespace

void SetFakeThreadState(uint64_t tstate) {
  g_fake_tstate = tstate;
}

const char* FakeVersionName(FakeVersion version) {
  static const char* kNames[] = {"py310", "py311", "py312", "py313", "py314"};
  return kNames[int(version)];
}

FakePython::FakePython(FakeVersion version) : version_(version) {
  view_.code_type = reinterpret_cast<uint64_t>(g_code_type);
  view_.unicode_type = reinterpret_cast<uint64_t>(g_unicode_type);
  view_.bytes_type = reinterpret_cast<uint64_t>(g_bytes_type);
  view_.thread_state = FakeThreadStateGetter;
  switch (version) {
    case FakeVersion::k310:
      thread_state_ = Allocate(sizeof(TState310));
      break;
    case FakeVersion::k311:
      thread_state_ = Allocate(sizeof(TState311));
      cframe_ = Allocate(sizeof(CFrame311));
      At<TState311>(thread_state_)->cframe = cframe_;
      break;
    case FakeVersion::k312:
      thread_state_ = Allocate(sizeof(TState312));
      cframe_ = Allocate(sizeof(CFrame312));
      At<TState312>(thread_state_)->cframe = cframe_;
      break;
    case FakeVersion::k313:
    case FakeVersion::k314:
      thread_state_ = Allocate(sizeof(TState313));
      break;
  }
  uint32_t major = version_hex() >> 24, minor = (version_hex() >> 16) & 0xff;
  if (const PyLayout* layout = inject::BuiltinPyLayout(major, minor)) {
    view_.layout = *layout;
  } else {
    BuildRuntime();
    const char* why = "";
    if (!inject::PyLayoutFromDebugOffsets(runtime_.get(), major, minor, &view_.layout, &why)) {
      throw std::runtime_error(why);
    }
  }
}

FakePython::~FakePython() = default;

uint32_t FakePython::version_hex() const {
  static const uint32_t kMinor[] = {10, 11, 12, 13, 14};
  return (3u << 24) | (kMinor[int(version_)] << 16);
}

uint64_t FakePython::Allocate(size_t bytes) {
  size_t words = (bytes + 15) / 8 + 2;  // slack past the end, all zero
  blocks_.push_back(std::make_unique<uint64_t[]>(words));
  return reinterpret_cast<uint64_t>(blocks_.back().get());
}

// The _Py_DebugOffsets of 3.13 or 3.14, section by section, from the structs above.
void FakePython::BuildRuntime() {
  bool v314 = version_ == FakeVersion::k314;
  std::vector<uint64_t> d;
  uint64_t cookie;
  std::memcpy(&cookie, "xdebugpy", 8);
  d.push_back(cookie);
  d.push_back(uint64_t(version_hex()) | 0xf0);  // final release
  d.push_back(0);                               // free_threaded
  d.insert(d.end(), {4096, 0, 0});              // runtime_state
  d.push_back(4096);                            // interpreter_state: size, then zeros
  d.insert(d.end(), v314 ? 15 : 12, 0);
  d.insert(d.end(), {sizeof(TState313), offsetof(TState313, prev), offsetof(TState313, next),
                     offsetof(TState313, interp), offsetof(TState313, current_frame), 0, 0, 0,
                     offsetof(TState313, status)});
  if (v314) {
    d.insert(d.end(),
             {sizeof(Frame314), offsetof(Frame314, previous), offsetof(Frame314, f_executable),
              offsetof(Frame314, instr_ptr), sizeof(Frame314), offsetof(Frame314, owner),
              offsetof(Frame314, stackpointer), 0});
  } else {
    d.insert(d.end(),
             {sizeof(Frame313), offsetof(Frame313, previous), offsetof(Frame313, f_executable),
              offsetof(Frame313, instr_ptr), sizeof(Frame313), offsetof(Frame313, owner)});
  }
  d.insert(d.end(), {sizeof(Code313), offsetof(Code313, co_filename), offsetof(Code313, co_name),
                     offsetof(Code313, co_qualname), offsetof(Code313, co_linetable),
                     offsetof(Code313, co_firstlineno), offsetof(Code313, co_argcount),
                     offsetof(Code313, co_localsplusnames), offsetof(Code313, co_localspluskinds),
                     offsetof(Code313, co_code_adaptive)});
  if (v314) d.push_back(0);                               // co_tlbc
  d.insert(d.end(), {sizeof(Obj), offsetof(Obj, type)});  // pyobject
  d.insert(d.end(), {400, 0, 0, 0});                      // type_object
  d.insert(d.end(), {32, 24, 16});                        // tuple_object
  d.insert(d.end(), {40, 24, 16});                        // list_object
  if (v314) d.insert(d.end(), {200, 0, 0, 0});            // set_object
  d.insert(d.end(), {48, 32, 40});                        // dict_object
  d.insert(d.end(), {24, 16});                            // float_object
  d.insert(d.end(), {32, 16, 24});                        // long_object
  d.insert(d.end(), {sizeof(Bytes), offsetof(Bytes, head.size), offsetof(Bytes, sval)});
  d.insert(d.end(), {sizeof(Compact312), offsetof(Ascii312, state), offsetof(Ascii312, length),
                     sizeof(Ascii312)});
  d.insert(d.end(), {64, 0});  // gc
  runtime_size_ = d.size() * 8;
  runtime_ = std::make_unique<uint8_t[]>(runtime_size_ + 4096);
  std::memcpy(runtime_.get(), d.data(), runtime_size_);
}

uint64_t FakePython::NewString(const std::u32string& text) {
  char32_t widest = 0;
  for (char32_t c : text) widest = c > widest ? c : widest;
  int kind = widest < 0x100 ? 1 : widest < 0x10000 ? 2 : 4;
  bool ascii = widest < 0x80;
  bool old = Before312(version_);
  size_t header = ascii ? (old ? sizeof(Ascii310) : sizeof(Ascii312))
                        : (old ? sizeof(Compact310) : sizeof(Compact312));
  uint64_t str = Allocate(header + (text.size() + 1) * kind);
  UnicodeState state{};
  state.kind = kind;
  state.compact = 1;
  state.ascii = ascii;
  state.ready = old;  // 3.10/3.11 "ready"; 3.12+ statically_allocated stays 0
  if (old) {
    auto* s = At<Ascii310>(str);
    s->head.type = view_.unicode_type;
    s->length = int64_t(text.size());
    s->hash = -1;  // not computed yet, as CPython makes them
    s->state = state;
  } else {
    auto* s = At<Ascii312>(str);
    s->head.type = view_.unicode_type;
    s->length = int64_t(text.size());
    s->hash = -1;
    s->state = state;
  }
  for (size_t i = 0; i < text.size(); ++i) {
    uint32_t c = text[i];
    std::memcpy(reinterpret_cast<char*>(str + header + i * kind), &c, kind);  // little-endian
  }
  return str;
}

uint64_t FakePython::NewBytes(const std::vector<uint8_t>& bytes) {
  uint64_t object = Allocate(sizeof(Bytes) + bytes.size());
  auto* b = At<Bytes>(object);
  b->head.type = view_.bytes_type;
  b->head.size = int64_t(bytes.size());
  if (!bytes.empty()) std::memcpy(b->sval, bytes.data(), bytes.size());
  return object;
}

uint64_t FakePython::NewCode(const FakeCodeSpec& spec) {
  uint64_t name = NewString(spec.name), qualname = NewString(spec.qualname);
  uint64_t filename = NewString(spec.filename), table = NewBytes(spec.line_table);
  size_t bytecode = size_t{spec.code_units} * 2;
  switch (version_) {
    case FakeVersion::k310: {
      uint64_t code = Allocate(sizeof(Code310));
      auto* c = At<Code310>(code);
      c->head.type = view_.code_type;
      c->co_firstlineno = spec.first_line;
      c->co_code = NewBytes(std::vector<uint8_t>(bytecode));
      c->co_filename = filename;
      c->co_name = name;
      c->co_linetable = table;
      return code;
    }
    case FakeVersion::k311: {
      uint64_t code = Allocate(sizeof(Code311) + bytecode);
      auto* c = At<Code311>(code);
      c->head = {0, view_.code_type, int64_t(spec.code_units)};
      c->co_firstlineno = spec.first_line;
      c->co_filename = filename;
      c->co_name = name;
      c->co_qualname = qualname;
      c->co_linetable = table;
      c->co_firsttraceable = spec.first_traceable;
      return code;
    }
    case FakeVersion::k312: {
      uint64_t code = Allocate(sizeof(Code312) + bytecode);
      auto* c = At<Code312>(code);
      c->head = {0, view_.code_type, int64_t(spec.code_units)};
      c->co_firstlineno = spec.first_line;
      c->co_filename = filename;
      c->co_name = name;
      c->co_qualname = qualname;
      c->co_linetable = table;
      c->co_firsttraceable = spec.first_traceable;
      c->co_version = spec.code_version;
      return code;
    }
    case FakeVersion::k313:
    case FakeVersion::k314: {
      uint64_t code = Allocate(sizeof(Code313) + bytecode);
      auto* c = At<Code313>(code);
      c->head = {0, view_.code_type, int64_t(spec.code_units)};
      c->co_firstlineno = spec.first_line;
      c->co_filename = filename;
      c->co_name = name;
      c->co_qualname = qualname;
      c->co_linetable = table;
      c->co_firsttraceable = spec.first_traceable;
      c->co_version = spec.code_version;
      return code;
    }
  }
  return 0;
}

uint64_t FakePython::NewFrame() {
  switch (version_) {
    case FakeVersion::k310:
      return Allocate(sizeof(Frame310));
    case FakeVersion::k311:
      return Allocate(sizeof(Frame311));
    case FakeVersion::k312:
      return Allocate(sizeof(Frame312));
    case FakeVersion::k313:
      return Allocate(sizeof(Frame313));
    case FakeVersion::k314:
      return Allocate(sizeof(Frame314));
  }
  return 0;
}

uint64_t FakePython::PushFrame(uint64_t code, uint32_t instr_offset, bool entry) {
  uint64_t frame = NewFrame();
  bool started = instr_offset != kPyNoInstruction;
  switch (version_) {
    case FakeVersion::k310: {
      auto* f = At<Frame310>(frame);
      f->f_back = top_frame_;
      f->f_code = code;
      f->f_lasti = started ? int(instr_offset) : -1;
      At<TState310>(thread_state_)->frame = frame;
      break;
    }
    case FakeVersion::k311: {
      auto* f = At<Frame311>(frame);
      f->previous = top_frame_;
      f->f_code = code;
      uint64_t start = code + offsetof(Code311, co_code_adaptive);
      f->prev_instr = started ? start + 2 * uint64_t(instr_offset) : start - 2;
      f->is_entry = entry;
      At<CFrame311>(cframe_)->current_frame = frame;
      break;
    }
    case FakeVersion::k312: {
      if (entry) {
        uint64_t shim = Allocate(sizeof(Frame312));
        At<Frame312>(shim)->previous = top_frame_;
        At<Frame312>(shim)->owner = 3;  // FRAME_OWNED_BY_CSTACK
        top_frame_ = shim;
      }
      auto* f = At<Frame312>(frame);
      f->previous = top_frame_;
      f->f_code = code;
      uint64_t start = code + offsetof(Code312, co_code_adaptive);
      f->prev_instr = started ? start + 2 * uint64_t(instr_offset) : start - 2;
      At<CFrame312>(cframe_)->current_frame = frame;
      break;
    }
    case FakeVersion::k313: {
      if (entry) {
        uint64_t shim = Allocate(sizeof(Frame313));
        At<Frame313>(shim)->previous = top_frame_;
        At<Frame313>(shim)->owner = 3;
        top_frame_ = shim;
      }
      auto* f = At<Frame313>(frame);
      f->previous = top_frame_;
      f->f_executable = code;
      uint64_t start = code + offsetof(Code313, co_code_adaptive);
      f->instr_ptr = started ? start + 2 * uint64_t(instr_offset) : start - 2;
      At<TState313>(thread_state_)->current_frame = frame;
      break;
    }
    case FakeVersion::k314: {
      if (entry) {
        // Entry frames alternate FRAME_OWNED_BY_INTERPRETER (3) and _CSTACK (4), with a
        // tagged None-like executable, as 3.14 has both.
        uint64_t shim = Allocate(sizeof(Frame314));
        At<Frame314>(shim)->previous = top_frame_;
        At<Frame314>(shim)->owner = char(3 + (top_frame_ >> 4) % 2);
        At<Frame314>(shim)->f_executable = 1;
        top_frame_ = shim;
      }
      auto* f = At<Frame314>(frame);
      f->previous = top_frame_;
      f->f_executable = code | 1;  // a _PyStackRef with its reference-count tag bit
      uint64_t start = code + offsetof(Code313, co_code_adaptive);
      f->instr_ptr = started ? start + 2 * uint64_t(instr_offset) : start - 2;
      At<TState313>(thread_state_)->current_frame = frame;
      break;
    }
  }
  top_frame_ = frame;
  return frame;
}

void FakePython::SetPrevious(uint64_t frame, uint64_t previous) {
  std::memcpy(reinterpret_cast<void*>(frame + view_.layout.frame_previous), &previous, 8);
}

void FakePython::SetFrameCode(uint64_t frame, uint64_t code) {
  std::memcpy(reinterpret_cast<void*>(frame + view_.layout.frame_code), &code, 8);
}

void FakePython::SetFrameOwner(uint64_t frame, int8_t owner) {
  std::memcpy(reinterpret_cast<void*>(frame + view_.layout.frame_owner), &owner, 1);
}

void FakePython::SetStringLength(uint64_t str, uint64_t length) {
  At<Ascii312>(str)->length = int64_t(length);  // same place in every version
}

void FakePython::SetStringState(uint64_t str, uint32_t state) {
  std::memcpy(&At<Ascii312>(str)->state, &state, 4);
}

void FakePython::SetBytesLength(uint64_t bytes, int64_t length) {
  At<Bytes>(bytes)->head.size = length;
}

void FakePython::SetCodeField(uint64_t code, int32_t offset, uint64_t value) {
  std::memcpy(reinterpret_cast<void*>(code + offset), &value, 8);
}

void FakePython::SetStringHash(uint64_t str, int64_t hash) {
  At<Ascii312>(str)->hash = hash;  // where 3.10's is too
}

void FakePython::SetCodeField32(uint64_t code, int32_t offset, uint32_t value) {
  std::memcpy(reinterpret_cast<void*>(code + offset), &value, 4);
}

}  // namespace gpuperf::testing
