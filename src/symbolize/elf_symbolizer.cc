#include "symbolize/elf_symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "base/demangle.h"

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

// A function symbol of the ELF symbol table.
struct FunctionSymbol {
  uint64_t start, size;
  const char* name;  // owned by libelf, valid while the Dwfl lives
  int rank;          // aliases at one address: the lowest rank names it (global first)
};

struct ElfSymbolizer::Handles {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  // Names built from a DIE's enclosing scopes, by the DIE's address in the debug data.
  std::unordered_map<const void*, std::string> qualified_names;
  // Function symbols sorted by address, built on first use: libdwfl's own address
  // lookup scans the whole symbol table on every call.
  std::vector<FunctionSymbol> symbols;
  bool symbols_loaded = false;
  ~Handles() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

namespace {

void LoadSymbols(ElfSymbolizer::Handles& handles) {
  handles.symbols_loaded = true;
  int count = dwfl_module_getsymtab(handles.module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    const char* name =
        dwfl_module_getsym_info(handles.module, i, &sym, &address, &section, nullptr, nullptr);
    int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || name[0] == '\0' || sym.st_size == 0 || section == SHN_UNDEF ||
        (type != STT_FUNC && type != STT_GNU_IFUNC)) {
      continue;
    }
    int bind = GELF_ST_BIND(sym.st_info);
    int rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
    handles.symbols.push_back({address, sym.st_size, name, rank});
  }
  std::sort(handles.symbols.begin(), handles.symbols.end(),
            [](const FunctionSymbol& a, const FunctionSymbol& b) {
              return a.start != b.start ? a.start < b.start : a.rank < b.rank;
            });
}

// The function symbol containing `address`, or nullptr.
const FunctionSymbol* FindSymbol(ElfSymbolizer::Handles& handles, uint64_t address) {
  if (!handles.symbols_loaded) LoadSymbols(handles);
  const auto& symbols = handles.symbols;
  auto after = std::upper_bound(symbols.begin(), symbols.end(), address,
                                [](uint64_t a, const FunctionSymbol& s) { return a < s.start; });
  // Symbols may nest (a function and a part of it): look back a little for one that
  // contains the address, preferring the innermost start among aliases.
  for (int back = 0; back < 8 && after != symbols.begin(); ++back) {
    --after;
    uint64_t start = after->start;
    while (after != symbols.begin() && (after - 1)->start == start) --after;  // best alias
    if (address < start + after->size) return &*after;
  }
  return nullptr;
}

const std::string& QualifiedName(ElfSymbolizer::Handles& handles, Dwarf_Die* die, bool qualify) {
  Dwarf_Die named = NamedDie(die);
  auto [it, added] = handles.qualified_names.try_emplace(named.addr);
  if (!added) return it->second;
  std::string& text = it->second;
  const char* name = dwarf_diename(&named);
  if (name == nullptr) return text;
  if (qualify) {
    // Prefix the enclosing namespaces and classes, outermost first. This walks the CU,
    // so it is done once per function.
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
  }
  text += name;
  return text;
}

std::string FunctionName(ElfSymbolizer::Handles& handles, Dwarf_Die* die, bool outlined,
                         uint64_t address, Dwarf_Addr bias, bool qualify) {
  // C functions have a linkage name only when an asm label renames them, as glibc does
  // for its internal aliases ("__GI_qsort"): the source name is the one a user knows.
  if (!qualify) {
    const std::string& name = QualifiedName(handles, die, false);
    if (!name.empty()) return name;
  }
  if (const char* linkage = LinkageName(die)) return Demangle(linkage);
  // GCC gives functions of internal linkage (anonymous namespaces, static) no linkage
  // name. For the outlined function the symbol table still has it, fully qualified,
  // with a clone suffix where there is one; accept the symbol only if it starts inside
  // this function, so a neighbour's symbol never names it.
  if (outlined) {
    const FunctionSymbol* symbol = FindSymbol(handles, address);
    if (symbol != nullptr && dwarf_haspc(die, symbol->start - bias) == 1) {
      return Demangle(symbol->name);
    }
  }
  return QualifiedName(handles, die, qualify);
}

bool IsCLanguage(Dwarf_Die* cudie) {
  int lang = dwarf_srclang(cudie);
  return lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 || lang == DW_LANG_C11;
}

// The chain of scopes (subprogram, inlined calls, lexical blocks) that contain `pc`,
// outermost first, found by descending only into DIEs whose ranges contain it: one pass
// over a small part of the CU, where dwarf_getscopes + dwarf_getscopes_die walk all of
// it several times.
bool DescendToPc(Dwarf_Die* parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& path) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return false;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
      case DW_TAG_lexical_block:
        if (dwarf_haspc(&child, pc) == 1) {
          path.push_back(child);
          DescendToPc(&child, pc, path);
          return true;
        }
        break;
      case DW_TAG_namespace:  // clang nests definitions in their namespaces
        if (DescendToPc(&child, pc, path)) return true;
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// The same chain through libdw's scope walk, for code laid out in ways DescendToPc does
// not follow (definitions nested in classes, ...).
bool ScopesByWalk(Dwarf_Die* cudie, Dwarf_Addr pc, std::vector<Dwarf_Die>& path) {
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes(cudie, pc, &scopes);
  if (count > 0) {
    Dwarf_Die innermost = scopes[0];
    std::free(scopes);
    scopes = nullptr;
    count = dwarf_getscopes_die(&innermost, &scopes);
  }
  for (int i = count - 1; i >= 0; --i) path.push_back(scopes[i]);
  std::free(scopes);
  return count > 0;
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

  // The scopes holding the address, outermost first: each inlined call's DIE sits
  // inside the DIE of the function it was inlined into.
  std::vector<Dwarf_Die> path;
  auto has_function = [&] {
    return std::any_of(path.begin(), path.end(),
                       [](Dwarf_Die& d) { return dwarf_tag(&d) == DW_TAG_subprogram; });
  };
  if (!DescendToPc(cudie, cu_address, path) || !has_function()) {
    path.clear();
    if (!ScopesByWalk(cudie, cu_address, path)) return false;
  }
  bool qualify = !IsCLanguage(cudie);

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
  for (size_t i = path.size(); i-- > 0 && !found_function;) {
    Dwarf_Die* scope = &path[i];
    int tag = dwarf_tag(scope);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    bool outlined = tag == DW_TAG_subprogram;
    out.push_back({FunctionName(*handles_, scope, outlined, address, bias, qualify), file, line});
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
  if (!found_function) {
    out.resize(first);  // no containing function: let the symbol table answer
    return false;
  }
  return true;
}

void ElfSymbolizer::ResolveWithSymbolTable(uint64_t address, std::vector<ResolvedFrame>& out) {
  const FunctionSymbol* symbol = FindSymbol(*handles_, address);
  if (symbol != nullptr) out.push_back({Demangle(symbol->name), std::string(), 0});
}

}  // namespace gpuperf
