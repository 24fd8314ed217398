// Loads the frame-pointer build of the test chain (chain.h with GP_CHAIN_NS=chain_fp, which
// must be included first) with dlopen: a library loaded after the unwind tables were built.
// GP_UNWIND_CHAIN_DIR names the directory of its libraries.
#pragma once

#include <dlfcn.h>

#include <string>

namespace gpuperf::chain_test {

using FpRun = int (*)(int, chain_fp::ChainContext*);

// chain_fp::Run, or nullptr (dlerror() says why).
inline FpRun LoadFramePointerChain() {
  // b, c, then a: calls into the other libraries bind lazily, at first call, but c takes
  // Descend's address (in b) when it is loaded.
  for (const char* part : {"b", "c", "a"}) {
    const std::string path =
        std::string(GP_UNWIND_CHAIN_DIR) + "/libgp_unwind_chain_" + part + "_fp.so";
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
    if (handle == nullptr) return nullptr;
    if (*part == 'a') {
      return reinterpret_cast<FpRun>(dlsym(handle, "_ZN8chain_fp3RunEiPNS_12ChainContextE"));
    }
  }
  return nullptr;
}

}  // namespace gpuperf::chain_test
