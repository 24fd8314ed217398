// C++ demangling of kernel and function names, with a cache (a trace repeats the same
// few hundred names millions of times).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace gpuperf {

// Demangles an Itanium-ABI name; returns the input unchanged when it is not mangled.
// nvcc's host launch stubs keep their prefix: "__device_stub__Z13kPf" ->
// "__device_stub__k(float*)".
std::string Demangle(std::string_view name);

// Shortens a demangled name for display: drops the return type and template/argument
// lists ("void at::native::foo<float, 4>(int)" -> "at::native::foo").
std::string ShortName(std::string_view demangled);

class DemangleCache {
 public:
  const std::string& Get(std::string_view mangled);

 private:
  std::unordered_map<std::string, std::string> cache_;
};

}  // namespace gpuperf
