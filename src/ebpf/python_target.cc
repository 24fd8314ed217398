#include "ebpf/python_target.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "cpython/python_layout.h"
#include "cpython/python_objects.h"

namespace gpuperf::ebpf {
namespace {

using inject::PyLayout;
using inject::PyThreadList;

// Bytes of another process's memory into `out`; how many were read.
size_t ReadRemote(uint32_t pid, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  const ssize_t n = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
  return n > 0 ? size_t(n) : 0;
}

// An object copied out of the process into 8-aligned local memory, so the in-process
// readers (python_objects.h) decode the copy: its type pointer still holds the process's
// address, which the view's types are.
class RemoteObject {
 public:
  bool Read(uint32_t pid, uint64_t address, size_t size) {
    words_.assign((size + 7) / 8 + 1, 0);
    return address != 0 && (address & 7) == 0 &&
           ReadRemote(pid, address, words_.data(), size) == size;
  }
  uint64_t local() const { return reinterpret_cast<uint64_t>(words_.data()); }
  template <typename T>
  T At(int32_t offset) const {
    return inject::PyLoad<T>(local(), offset);
  }

 private:
  std::vector<uint64_t> words_;
};

// A str object: its header says how long it is; then header and characters are read.
bool ReadRemoteString(uint32_t pid, const inject::PyRuntimeView& view, uint64_t address,
                      int capacity, std::string* out) {
  const PyLayout& l = view.layout;
  RemoteObject header;
  if (!header.Read(pid, address, size_t(l.unicode_compact_data))) return false;
  const uint64_t length = header.At<uint64_t>(l.unicode_length);
  const uint32_t state = header.At<uint32_t>(l.unicode_state);
  const uint32_t kind = (state >> 2) & 7;
  const bool ascii = (state >> 6) & 1;
  if (length > inject::kMaxSanePyStringLength || kind == 0 || kind > 4) return false;
  const uint64_t units =
      std::min<uint64_t>(length, uint64_t(capacity));  // cut as CopyPyString cuts
  const size_t size =
      size_t((ascii ? l.unicode_ascii_data : l.unicode_compact_data) + units * kind);
  RemoteObject whole;
  if (!whole.Read(pid, address, size)) return false;
  // CopyPyString reads `length` characters: the copy holds only `units` of them.
  std::memcpy(reinterpret_cast<char*>(whole.local()) + l.unicode_length, &units, sizeof(units));
  out->resize(size_t(capacity));
  const int n = inject::CopyPyString(view, whole.local(), out->data(), capacity);
  if (n < 0) return false;
  out->resize(size_t(n));
  return true;
}

// A bytes object's contents, up to `limit` bytes.
bool ReadRemoteBytes(uint32_t pid, const inject::PyRuntimeView& view, uint64_t address,
                     uint64_t limit, std::string* out, uint64_t* full_size) {
  const PyLayout& l = view.layout;
  RemoteObject header;
  if (!header.Read(pid, address, size_t(l.bytes_data))) return false;
  const int64_t size = header.At<int64_t>(l.var_size);
  if (size < 0 || uint64_t(size) > inject::kMaxSanePyBytesLength) return false;
  *full_size = uint64_t(size);
  const uint64_t kept = std::min<uint64_t>(uint64_t(size), limit);
  RemoteObject whole;
  if (!whole.Read(pid, address, size_t(l.bytes_data + kept))) return false;
  const uint8_t* data = nullptr;
  uint64_t ignored = 0;
  std::memcpy(reinterpret_cast<char*>(whole.local()) + l.var_size, &kept, sizeof(kept));
  if (!inject::PyBytesContents(view, whole.local(), &data, &ignored)) return false;
  out->assign(reinterpret_cast<const char*>(data), size_t(kept));
  return true;
}

struct InterpreterSymbols {
  uint64_t runtime = 0, code_type = 0, unicode_type = 0, bytes_type = 0;
};

// Looks the interpreter's symbols up in the file's .dynsym and .symtab (values are link-time
// addresses: the caller adds the load bias).
bool ReadInterpreterSymbols(const std::string& path, InterpreterSymbols* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  Elf_Scn* section = nullptr;
  while (elf != nullptr && (section = elf_nextscn(elf, section)) != nullptr) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) continue;
    if (header.sh_type != SHT_DYNSYM && header.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    const size_t count = header.sh_entsize != 0 ? header.sh_size / header.sh_entsize : 0;
    for (size_t i = 0; data != nullptr && i < count; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, int(i), &symbol) == nullptr || symbol.st_value == 0) continue;
      const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
      if (name == nullptr) continue;
      const std::string_view n(name);
      if (n == "_PyRuntime") out->runtime = symbol.st_value;
      if (n == "PyCode_Type") out->code_type = symbol.st_value;
      if (n == "PyUnicode_Type") out->unicode_type = symbol.st_value;
      if (n == "PyBytes_Type") out->bytes_type = symbol.st_value;
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return out->runtime != 0 && out->code_type != 0 && out->unicode_type != 0 && out->bytes_type != 0;
}

// Where the walk's fields of a frame are, as one span of bytes (gp_py_target.frame_base):
// false when they do not fit the BPF program's read (a layout we have not seen).
bool FrameSpan(const PyLayout& l, int32_t* base, uint32_t* span) {
  const int32_t instr_size = l.instr_is_pointer ? 8 : 4;
  int32_t from = std::min({l.frame_previous, l.frame_code, l.frame_instr});
  int32_t to = std::max({l.frame_previous + 8, l.frame_code + 8, l.frame_instr + instr_size});
  for (int32_t byte_field : {l.frame_owner, l.frame_is_entry}) {
    if (byte_field < 0) continue;
    from = std::min(from, byte_field);
    to = std::max(to, byte_field + 1);
  }
  *base = from;
  *span = uint32_t(to - from);
  const bool aligned = (l.frame_previous - from) % 8 == 0 && (l.frame_code - from) % 8 == 0 &&
                       (l.frame_instr - from) % instr_size == 0;
  return from >= 0 && *span < GP_PY_FRAME_SPAN_MAX && aligned;
}

void FillBpfTarget(const PyLayout& l, const PyThreadList& threads, uint64_t runtime,
                   gp_py_target* t) {
  *t = gp_py_target{};
  t->runtime = runtime;
  t->code_pointer_mask = l.code_pointer_mask;
  t->interpreters_head = threads.interpreters_head;
  t->threads_head = threads.threads_head;
  t->tstate_next = threads.tstate_next;
  t->tstate_native_thread_id = threads.tstate_native_thread_id;
  t->tstate_thread_id = threads.tstate_thread_id;
  t->tstate_frame = l.tstate_frame;
  t->cframe_current_frame = l.cframe_current_frame;
  t->frame_previous = l.frame_previous;
  t->frame_code = l.frame_code;
  t->frame_instr = l.frame_instr;
  t->frame_owner = l.frame_owner;
  t->frame_is_entry = l.frame_is_entry;
  t->code_bytecode = l.code_bytecode;
  t->flavor = l.flavor == inject::PyFrameFlavor::kFrameObjects ? GP_PY_FRAME_OBJECTS
              : l.flavor == inject::PyFrameFlavor::kEntryFlag  ? GP_PY_ENTRY_FLAG
                                                               : GP_PY_SHIM_FRAMES;
  t->shim_owner = uint32_t(l.shim_owner);
  t->instr_is_pointer = l.instr_is_pointer ? 1 : 0;
  FrameSpan(l, &t->frame_base, &t->frame_span);
  t->code_key =
      l.code_version >= 0 ? l.code_version : (l.code_qualname >= 0 ? l.code_qualname : l.code_name);
}

// The layout and thread list of `major.minor`, from the tables or the process's
// _Py_DebugOffsets; false with a reason.
bool LayoutOf(uint32_t pid, uint64_t runtime, uint32_t major, uint32_t minor, PyLayout* layout,
              PyThreadList* threads, std::string* why) {
  if (const PyLayout* builtin = inject::BuiltinPyLayout(major, minor)) {
    const PyThreadList* list = inject::BuiltinPyThreadList(major, minor);
    if (list == nullptr) {
      *why = "where its threads are listed is not known";
      return false;
    }
    *layout = *builtin;
    *threads = *list;
    return true;
  }
  // 3.13+: _Py_DebugOffsets, a few hundred bytes at the start of _PyRuntime.
  uint64_t offsets[256] = {};
  if (ReadRemote(pid, runtime, offsets, sizeof(offsets)) != sizeof(offsets)) {
    *why = "_PyRuntime is not readable";
    return false;
  }
  const char* reason = nullptr;
  if (!inject::PyLayoutFromDebugOffsets(offsets, major, minor, layout, &reason)) {
    *why = reason;
    return false;
  }
  if (!inject::PyThreadListFromDebugOffsets(offsets, major, minor, threads)) {
    *why = "_PyRuntime.debug_offsets has no usable thread list";
    return false;
  }
  return true;
}

// GPUPERF_CPU_PYTHON_VERSION=3.N: the version to assume (tests).
bool VersionOverride(uint32_t* major, uint32_t* minor) {
  const char* value = std::getenv("GPUPERF_CPU_PYTHON_VERSION");
  return value != nullptr && std::sscanf(value, "%u.%u", major, minor) == 2;
}

}  // namespace

bool IsPythonInterpreterFile(std::string_view path, uint32_t* major, uint32_t* minor) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  if (name.starts_with("lib")) name.remove_prefix(3);
  if (!name.starts_with("python")) return false;
  unsigned a = 0, b = 0;
  char rest = '\0';
  const std::string text(name.substr(6));
  const int fields = std::sscanf(text.c_str(), "%u.%u%c", &a, &b, &rest);
  if (fields < 2 || a != 3) return false;
  // python3.12, python3.12d (a debug build is refused later), libpython3.12.so.1.0
  if (fields == 3 && rest != '.' && rest != 'd' && rest != 't') return false;
  *major = a;
  *minor = b;
  return true;
}

PythonTarget FindPythonTarget(uint32_t pid, const std::vector<MappedModule>& modules) {
  PythonTarget target;
  for (const MappedModule& m : modules) {
    uint32_t major = 0, minor = 0;
    if (!IsPythonInterpreterFile(m.path, &major, &minor)) continue;
    InterpreterSymbols symbols;
    if (!ReadInterpreterSymbols(m.path, &symbols)) continue;  // a python3.X without its runtime
    VersionOverride(&major, &minor);
    target.module = m.path;
    target.version = inject::PyVersionHex(major, minor);
    const std::string_view name = std::string_view(m.path).substr(m.path.rfind('/') + 1);
    const size_t version_end = name.find(std::to_string(minor)) + std::to_string(minor).size();
    if (version_end < name.size() && (name[version_end] == 'd' || name[version_end] == 't')) {
      // python3.Xd (Py_DEBUG: other object headers) or python3.Xt (free-threaded).
      target.state = PythonTargetState::kRefused;
      target.why = "CPython " + std::to_string(major) + "." + std::to_string(minor) +
                   ": a debug or free-threaded build (" + std::string(name) + ")";
      return target;
    }
    const uint64_t runtime = m.load_bias + symbols.runtime;
    PyLayout layout;
    PyThreadList threads;
    if (!LayoutOf(pid, runtime, major, minor, &layout, &threads, &target.why)) {
      target.state = PythonTargetState::kRefused;
      target.why =
          "CPython " + std::to_string(major) + "." + std::to_string(minor) + ": " + target.why;
      return target;
    }
    int32_t base = 0;
    uint32_t span = 0;
    if (!FrameSpan(layout, &base, &span)) {
      target.state = PythonTargetState::kRefused;
      target.why = "CPython " + std::to_string(major) + "." + std::to_string(minor) +
                   ": its frames' fields are not where the BPF walk can read them at once";
      return target;
    }
    target.view.layout = layout;
    target.view.code_type = m.load_bias + symbols.code_type;
    target.view.unicode_type = m.load_bias + symbols.unicode_type;
    target.view.bytes_type = m.load_bias + symbols.bytes_type;
    FillBpfTarget(layout, threads, runtime, &target.bpf);
    target.state = PythonTargetState::kReady;
    return target;
  }
  return target;
}

bool ReadRemoteCode(uint32_t pid, const PythonTarget& target, uint64_t code, uint64_t key,
                    PyCodeInfo* out) {
  const inject::PyRuntimeView& view = target.view;
  const PyLayout& l = view.layout;
  // The code object's fixed part ends where its bytecode begins (3.11+) or with its line
  // table pointer (3.10).
  const int32_t head = std::max({l.code_bytecode, l.code_line_table, l.code_filename,
                                 l.code_first_traceable, l.code_qualname}) +
                       8;
  RemoteObject object;
  if (!object.Read(pid, code, size_t(head))) return false;
  if (object.At<uint64_t>(l.ob_type) != view.code_type) return false;
  if (object.At<uint64_t>(target.bpf.code_key) != key) return false;
  const int32_t name_at = l.code_qualname >= 0 ? l.code_qualname : l.code_name;
  *out = PyCodeInfo{};
  out->first_line = object.At<int32_t>(l.code_first_line);
  out->python_version = l.version;
  ReadRemoteString(pid, view, object.At<uint64_t>(name_at), inject::kMaxPyNameBytes, &out->name);
  ReadRemoteString(pid, view, object.At<uint64_t>(l.code_filename), inject::kMaxPyFilenameBytes,
                   &out->filename);
  uint64_t table_size = 0;
  if (ReadRemoteBytes(pid, view, object.At<uint64_t>(l.code_line_table),
                      inject::kMaxPyLineTableBytes, &out->line_table, &table_size)) {
    out->line_format = l.line_format;
  }
  if (l.instr_is_pointer) {
    const int64_t units = object.At<int64_t>(l.var_size);
    out->code_units = units > 0 && units < int64_t{kPyNoInstruction} ? uint32_t(units) : 0;
    const int32_t first_traceable = object.At<int32_t>(l.code_first_traceable);
    out->first_traceable = first_traceable > 0 ? uint32_t(first_traceable) : 0;
  } else {
    std::string bytecode;
    uint64_t bytecode_size = 0;
    if (ReadRemoteBytes(pid, view, object.At<uint64_t>(l.code_bytecode), 0, &bytecode,
                        &bytecode_size)) {
      out->code_units = uint32_t(bytecode_size / 2);
    }
  }
  return true;
}

}  // namespace gpuperf::ebpf
