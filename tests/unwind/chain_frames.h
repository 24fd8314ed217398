// What a stack captured at the bottom of the test chain (chain.h) must hold: the chain's
// functions in order, named from the PCs with dladdr. Shared by the unwinder tests.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gpuperf::chain_test {

// How the chain is entered from Run (ChainContext::realign / other_register).
enum class ChainEntry { kPlain, kRealigned, kOtherRegister };

// The chain functions each frame belongs to, innermost first (frames elsewhere skipped).
inline std::vector<std::string> ChainFrames(const uint64_t* pcs, int depth) {
  static const char* const kNames[] = {
      "Run",           "MiddleA",          "SortAndCallLeaf", "Descend",
      "ManyRegisters", "WithAlloca",       "WithBigArray",    "TailCaller",
      "Realigned",     "ViaOtherRegister", "CallLeaf"};
  std::vector<std::string> names;
  for (int i = 0; i < depth; ++i) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(pcs[i] - 1), &info) == 0 || info.dli_sname == nullptr) {
      continue;
    }
    const std::string mangled = info.dli_sname;
    for (const char* name : kNames) {
      // Itanium mangling: <namespace><length><name>E<parameters>
      if (mangled.find(std::to_string(std::strlen(name)) + name + "E") != std::string::npos) {
        names.push_back(name);
      }
    }
  }
  return names;
}

// What the chain's code says the stack holds (chain_b.cc's switch), innermost first. The
// tail call leaves no frame.
inline std::vector<std::string> ExpectedChainFrames(int levels,
                                                    ChainEntry entry = ChainEntry::kPlain) {
  std::vector<std::string> outer_first = {"Run"};
  if (entry == ChainEntry::kRealigned) outer_first.push_back("Realigned");
  if (entry == ChainEntry::kOtherRegister) outer_first.push_back("ViaOtherRegister");
  static const char* const kByRemainder[] = {"WithAlloca", "WithBigArray", "MiddleA", nullptr,
                                             "ManyRegisters"};
  for (int n = levels; n > 0; --n) {
    outer_first.push_back("Descend");
    if (kByRemainder[n % 5] != nullptr) outer_first.push_back(kByRemainder[n % 5]);
  }
  outer_first.insert(outer_first.end(), {"Descend", "SortAndCallLeaf", "CallLeaf"});
  std::reverse(outer_first.begin(), outer_first.end());
  return outer_first;
}

// Whether some frame's code is in a module whose file name starts with `library_prefix`.
inline bool HasFrameIn(const uint64_t* pcs, int depth, const char* library_prefix) {
  for (int i = 0; i < depth; ++i) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(pcs[i] - 1), &info) == 0 || info.dli_fname == nullptr) {
      continue;
    }
    const char* slash = std::strrchr(info.dli_fname, '/');
    const char* base = slash != nullptr ? slash + 1 : info.dli_fname;
    if (std::strncmp(base, library_prefix, std::strlen(library_prefix)) == 0) return true;
  }
  return false;
}

}  // namespace gpuperf::chain_test
