#include "base/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace gpuperf {

namespace {

// nvcc's host-side launch stubs are named "__device_stub__" + the kernel's mangled name
// without its leading underscore ("__device_stub__Z13matmul_kernelPKfS0_Pfiii").
constexpr std::string_view kDeviceStubPrefix = "__device_stub__";

}  // namespace

std::string Demangle(std::string_view name) {
  if (name.starts_with(kDeviceStubPrefix) && name.size() > kDeviceStubPrefix.size() + 1 &&
      name[kDeviceStubPrefix.size()] == 'Z') {
    std::string kernel = "_" + std::string(name.substr(kDeviceStubPrefix.size()));
    std::string demangled = Demangle(kernel);
    if (demangled == kernel) return std::string(name);  // not a mangled name after all
    return std::string(kDeviceStubPrefix) + demangled;
  }
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  std::string mangled(name);
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return mangled;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

std::string ShortName(std::string_view name) {
  // Cut the argument list: the last top-level '(' (skipping "(anonymous namespace)").
  int depth = 0;
  size_t cut = name.size();
  for (size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if (c == ')' || c == '>' || c == ']') ++depth;
    if (c == '(' || c == '<' || c == '[') --depth;
    if (c == '(' && depth == 0) {
      if (name.substr(i).starts_with("(anonymous namespace)")) continue;
      cut = i;
      break;
    }
  }
  std::string_view head = name.substr(0, cut);
  // A call operator without its arguments, as DWARF names a lambda's inlined body
  // ("operator()"): the cut took the operator's own parentheses.
  if (head.ends_with("operator") && name.substr(cut).starts_with("()")) {
    head = name.substr(0, cut + 2);
  }
  // Drop template arguments at any level, keep the qualified name.
  std::string out;
  depth = 0;
  for (char c : head) {
    if (c == '<') {
      ++depth;
      continue;
    }
    if (c == '>') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth == 0) out += c;
  }
  // Drop a leading return type ("void foo" -> "foo"): the last space outside parentheses,
  // so "void ns::(anonymous namespace)::foo" keeps its namespace.
  size_t space = std::string::npos;
  depth = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '(') ++depth;
    if (out[i] == ')' && depth > 0) --depth;
    if (out[i] == ' ' && depth == 0) space = i;
  }
  if (space != std::string::npos) out = out.substr(space + 1);
  return out.empty() ? std::string(name) : out;
}

const std::string& DemangleCache::Get(std::string_view mangled) {
  auto it = cache_.find(std::string(mangled));
  if (it != cache_.end()) return it->second;
  return cache_.emplace(std::string(mangled), Demangle(mangled)).first->second;
}

}  // namespace gpuperf
