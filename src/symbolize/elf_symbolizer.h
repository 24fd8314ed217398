// One ELF file opened with libdw (elfutils' libdwfl, offline): address -> function
// names, source lines and the chain of inlined calls. The trace plumbing lives in
// symbolizer.cc; this file knows nothing about traces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuperf {

struct ResolvedFrame {
  std::string function;  // demangled
  std::string file;      // empty without debug info
  uint32_t line = 0;
};

enum class ElfOpenResult : uint8_t {
  kOk,
  kMissing,          // no such file
  kUnreadable,       // not an ELF file libdw can read
  kBuildIdMismatch,  // the file changed since the recording
};

class ElfSymbolizer {
 public:
  // Opens `path`. When `expected_build_id` (hex) is not empty, the file's build-id must
  // equal it, or the result is kBuildIdMismatch. `*message` explains a failure.
  static std::unique_ptr<ElfSymbolizer> Open(const std::string& path,
                                             const std::string& expected_build_id,
                                             ElfOpenResult* result, std::string* message);
  ~ElfSymbolizer();
  ElfSymbolizer(const ElfSymbolizer&) = delete;
  ElfSymbolizer& operator=(const ElfSymbolizer&) = delete;

  // Frames for the instruction at `address`, an ELF virtual address (runtime PC minus
  // load bias): innermost inlined function first, the function that holds the code last.
  // Appends nothing when neither debug info nor the symbol table covers the address.
  void Resolve(uint64_t address, std::vector<ResolvedFrame>& out);

  const std::string& build_id() const { return build_id_; }
  struct Handles;  // libdw state, defined in the .cc
  bool has_debug_info() const { return has_debug_info_; }

 private:
  ElfSymbolizer() = default;
  bool ResolveWithDwarf(uint64_t address, std::vector<ResolvedFrame>& out);
  void ResolveWithSymbolTable(uint64_t address, std::vector<ResolvedFrame>& out);

  std::unique_ptr<Handles> handles_;
  std::string build_id_;
  bool has_debug_info_ = false;
};

// Lowercase hex of bytes.
std::string HexString(const unsigned char* bytes, size_t size);

}  // namespace gpuperf
