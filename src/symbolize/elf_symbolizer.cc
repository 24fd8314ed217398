#include "symbolize/elf_symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <unordered_map>

#include "analyze/demangle.h"

namespace gpuperf {
namespace {

// Separate debug info is looked up the standard way (.gnu_debuglink, then
// /usr/lib/debug/.build-id/xx/yyyy.debug); a null path means libdwfl's default.
char* g_debuginfo_path = nullptr;

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

const char* AttrString(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  // _integrate follows DW_AT_abstract_origin and DW_AT_specification, where inlined
  // instances and out-of-class member definitions keep their names.
  return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

const char* LinkageName(Dwarf_Die* die) {
  const char* linkage = AttrString(die, DW_AT_linkage_name);
  return linkage != nullptr ? linkage : AttrString(die, DW_AT_MIPS_linkage_name);
}

// The DIE that carries the name of a function instance: inlined and out-of-line copies
// point at it through DW_AT_abstract_origin, out-of-class definitions through
// DW_AT_specification.
Dwarf_Die NamedDie(Dwarf_Die* die) {
  Dwarf_Die current = *die;
  for (int hop = 0; hop < 8; ++hop) {
    Dwarf_Attribute attr;
    if (dwarf_attr(&current, DW_AT_name, &attr) != nullptr) break;
    Dwarf_Die next;
    if ((dwarf_attr(&current, DW_AT_abstract_origin, &attr) == nullptr &&
         dwarf_attr(&current, DW_AT_specification, &attr) == nullptr) ||
        dwarf_formref_die(&attr, &next) == nullptr) {
      break;
    }
    current = next;
  }
  return current;
}

bool UData(Dwarf_Die* die, unsigned int name, Dwarf_Word* value) {
  Dwarf_Attribute attr;
  return dwarf_formudata(dwarf_attr(die, name, &attr), value) == 0;
}

}  // namespace

struct ElfSymbolizer::Handles {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  // Names built from a DIE's enclosing scopes, by the DIE's address in the debug data.
  std::unordered_map<const void*, std::string> qualified_names;
  ~Handles() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

namespace {

const std::string& QualifiedName(ElfSymbolizer::Handles& handles, Dwarf_Die* die) {
  Dwarf_Die named = NamedDie(die);
  auto [it, added] = handles.qualified_names.try_emplace(named.addr);
  if (!added) return it->second;
  std::string& text = it->second;
  const char* name = dwarf_diename(&named);
  if (name == nullptr) return text;
  // Prefix the enclosing namespaces and classes, outermost first.
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes_die(&named, &scopes);
  for (int i = count - 1; i >= 1; --i) {
    int tag = dwarf_tag(&scopes[i]);
    const char* scope_name = dwarf_diename(&scopes[i]);
    if (tag == DW_TAG_namespace) {
      text += scope_name != nullptr ? scope_name : "(anonymous namespace)";
      text += "::";
    } else if ((tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                tag == DW_TAG_union_type) &&
               scope_name != nullptr) {
      text += scope_name;
      text += "::";
    }
  }
  std::free(scopes);
  text += name;
  return text;
}

std::string FunctionName(ElfSymbolizer::Handles& handles, Dwarf_Die* die, bool outlined,
                         uint64_t address) {
  if (const char* linkage = LinkageName(die)) return Demangle(linkage);
  // GCC gives functions of internal linkage (anonymous namespaces, static) no linkage
  // name. For the outlined function the symbol table still has it, fully qualified,
  // with a clone suffix where there is one; accept the symbol only if it starts inside
  // this function, so a neighbour's symbol never names it.
  if (outlined) {
    GElf_Off offset = 0;
    GElf_Sym sym;
    const char* name =
        dwfl_module_addrinfo(handles.module, address, &offset, &sym, nullptr, nullptr, nullptr);
    Dwarf_Addr bias = 0;
    if (name != nullptr && name[0] != '\0' && dwfl_module_addrdie(handles.module, address, &bias) &&
        dwarf_haspc(die, address - offset - bias) == 1) {
      return Demangle(name);
    }
  }
  return QualifiedName(handles, die);
}

}  // namespace

std::string HexString(const unsigned char* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    hex.push_back(kHex[bytes[i] >> 4]);
    hex.push_back(kHex[bytes[i] & 15]);
  }
  return hex;
}

std::unique_ptr<ElfSymbolizer> ElfSymbolizer::Open(const std::string& path,
                                                   const std::string& expected_build_id,
                                                   ElfOpenResult* result, std::string* message) {
  struct stat st;
  if (path.empty() || path[0] != '/' || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    *result = ElfOpenResult::kMissing;
    *message = path + ": no such file";
    return nullptr;
  }
  std::unique_ptr<ElfSymbolizer> self(new ElfSymbolizer());
  self->handles_ = std::make_unique<Handles>();
  Handles& h = *self->handles_;
  h.dwfl = dwfl_begin(&kOfflineCallbacks);
  if (h.dwfl != nullptr) {
    dwfl_report_begin(h.dwfl);
    // Base 0: addresses are the file's own virtual addresses; callers subtract the bias.
    h.module = dwfl_report_elf(h.dwfl, path.c_str(), path.c_str(), -1, 0, false);
    dwfl_report_end(h.dwfl, nullptr, nullptr);
  }
  if (h.module == nullptr) {
    *result = ElfOpenResult::kUnreadable;
    *message = path + ": " + dwfl_errmsg(-1);
    return nullptr;
  }
  const unsigned char* bits = nullptr;
  GElf_Addr note_vaddr = 0;
  int length = dwfl_module_build_id(h.module, &bits, &note_vaddr);
  if (length > 0) self->build_id_ = HexString(bits, static_cast<size_t>(length));
  if (!expected_build_id.empty() && self->build_id_ != expected_build_id) {
    *result = ElfOpenResult::kBuildIdMismatch;
    *message = path + ": build-id " + (self->build_id_.empty() ? "none" : self->build_id_) +
               " differs from the recorded " + expected_build_id +
               " (rebuilt since the recording?)";
    return nullptr;
  }
  Dwarf_Addr bias = 0;
  self->has_debug_info_ = dwfl_module_getdwarf(h.module, &bias) != nullptr;
  *result = ElfOpenResult::kOk;
  return self;
}

ElfSymbolizer::~ElfSymbolizer() = default;

void ElfSymbolizer::Resolve(uint64_t address, std::vector<ResolvedFrame>& out) {
  if (has_debug_info_ && ResolveWithDwarf(address, out)) return;
  ResolveWithSymbolTable(address, out);
}

bool ElfSymbolizer::ResolveWithDwarf(uint64_t address, std::vector<ResolvedFrame>& out) {
  Dwfl_Module* module = handles_->module;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cudie = dwfl_module_addrdie(module, address, &bias);
  if (cudie == nullptr) return false;
  Dwarf_Addr cu_address = address - bias;

  // The innermost scope holding the address, then its physical parents: each inlined
  // call's DIE sits inside the DIE of the function it was inlined into.
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes(cudie, cu_address, &scopes);
  if (count <= 0) {
    std::free(scopes);
    return false;
  }
  Dwarf_Die innermost = scopes[0];
  std::free(scopes);
  scopes = nullptr;
  count = dwarf_getscopes_die(&innermost, &scopes);
  if (count <= 0) {
    std::free(scopes);
    return false;
  }

  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_getsrcfiles(cudie, &files, &file_count) != 0) files = nullptr;

  // The innermost function is at the line of the address; each function further out is
  // at the line where the previous one was inlined into it.
  std::string file;
  uint32_t line = 0;
  if (Dwarf_Line* src = dwarf_getsrc_die(cudie, cu_address)) {
    if (const char* name = dwarf_linesrc(src, nullptr, nullptr)) file = name;
    int lineno = 0;
    if (dwarf_lineno(src, &lineno) == 0 && lineno > 0) line = static_cast<uint32_t>(lineno);
  }
  size_t first = out.size();
  bool found_function = false;
  for (int i = 0; i < count && !found_function; ++i) {
    Dwarf_Die* scope = &scopes[i];
    int tag = dwarf_tag(scope);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    out.push_back({FunctionName(*handles_, scope, tag == DW_TAG_subprogram, address), file, line});
    if (tag == DW_TAG_subprogram) {
      found_function = true;
      break;
    }
    Dwarf_Word call_file = 0, call_line = 0;
    file.clear();
    line = 0;
    if (UData(scope, DW_AT_call_file, &call_file) && files != nullptr && call_file < file_count) {
      if (const char* name = dwarf_filesrc(files, call_file, nullptr, nullptr)) file = name;
    }
    if (UData(scope, DW_AT_call_line, &call_line)) line = static_cast<uint32_t>(call_line);
  }
  std::free(scopes);
  if (!found_function) {
    out.resize(first);  // no containing function: let the symbol table answer
    return false;
  }
  return true;
}

void ElfSymbolizer::ResolveWithSymbolTable(uint64_t address, std::vector<ResolvedFrame>& out) {
  GElf_Off offset = 0;
  GElf_Sym sym;
  const char* name =
      dwfl_module_addrinfo(handles_->module, address, &offset, &sym, nullptr, nullptr, nullptr);
  if (name == nullptr || name[0] == '\0') return;
  out.push_back({Demangle(name), std::string(), 0});
}

}  // namespace gpuperf
